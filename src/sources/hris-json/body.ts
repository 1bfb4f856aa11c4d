/** The parts of an HRIS response every page shares: its JSON and its array of records. */
import type { PaginationConfig } from '../../config/sources.js';
import type { EntityKind } from '../../domain/entities.js';
import { getPath, WrongType } from '../../desired/index.js';
import { sourceInvalid, sourceUnreadable } from '../context.js';

/** One entity's part of the config. */
export interface EntityConfig {
  url?: string | undefined;
  file?: string | undefined;
  method?: 'GET' | 'POST';
  body?: Record<string, unknown> | undefined;
  items_path: string;
  total_path?: string | undefined;
  total_header?: string | undefined;
  pagination: PaginationConfig;
}

/** The items of one response, or a failed read naming the path and what it found. */
export function itemsOf(source: string, entity: EntityKind, itemsPath: string, body: unknown, where: string): unknown[] {
  const items = getPath(body, itemsPath);
  if (!Array.isArray(items)) {
    const found =
      items instanceof WrongType
        ? `${items.found} at ${items.at}`
        : items === undefined
          ? 'nothing'
          : items === null
            ? 'null'
            : `a${typeof items === 'object' ? 'n object' : ` ${typeof items}`}`;
    throw sourceUnreadable(source, `${entity}: ${where}: items_path "${itemsPath}" does not lead to an array (found ${found})`);
  }
  return items;
}

/** Parses a response body; `input` says whether it is an input file (exit 2) or a server's answer. */
export function parseJson(source: string, entity: EntityKind, text: string, where: string, input: boolean): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const msg = (err as Error).message;
    if (!input) throw sourceUnreadable(source, `${entity}: ${where}: malformed JSON: ${msg}`, err);
    // Name the place as file:line:column (Node 20 says "at position N", Node 22 also "(line L column C)").
    const pos = /position (\d+)/.exec(msg);
    let place = where;
    if (pos) {
      const before = text.slice(0, Number(pos[1]));
      const line = before.split('\n').length;
      place = `${where}:${line}:${before.length - before.lastIndexOf('\n')}`;
    } else if (/Unexpected end of JSON input/.test(msg)) {
      const lines = text.split('\n');
      place = `${where}:${lines.length}:${lines[lines.length - 1]!.length + 1}`;
    }
    throw sourceInvalid(source, `${entity}: ${place}: malformed JSON: ${msg}`, err);
  }
}

