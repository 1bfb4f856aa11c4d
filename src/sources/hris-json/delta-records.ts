/** What the delta protocols of hris-json sources (graph-delta.ts, bamboohr-delta.ts) and delta.ts share. */
import type { HrisJsonSourceConfig } from '../../config/sources.js';
import { getPath } from '../../desired/index.js';
import { sourceUnreadable, type SourceReadContext } from '../context.js';
import type { HttpPageReader } from '../http/fetch-json.js';
import type { EntityConfig } from './body.js';

/** The changes a source reported since a watermark. */
export interface DeltaChanges {
  /** New or changed records by key: whole, or (partial) only the properties that changed. */
  put: Map<string, unknown>;
  /** Keys of records gone. */
  removed: Set<string>;
  /** Whether a put of a known record carries only its changed properties (merged onto the snapshot's record). */
  partial: boolean;
  /** The watermark to save with them. */
  watermark: string;
}

/** One vendor's delta protocol. */
export interface DeltaProtocol {
  /** Before a full read: the watermark of "now", when the protocol takes it that way. */
  watermarkBeforeFull(): Promise<string | undefined>;
  /** After a full read that took none before: the watermark from the first response's Date header. */
  watermarkAfterFull(firstDate: string | undefined): string;
  /** The changes since `watermark`, or why the delta cannot be read (then a full read runs). */
  changes(watermark: string): Promise<DeltaChanges | { fallback: string }>;
}

/** What the protocols and this module share. */
export interface DeltaDeps {
  source: HrisJsonSourceConfig;
  cfg: EntityConfig;
  reader: HttpPageReader;
  ctx: SourceReadContext;
}

/** The key of a raw record (`members.delta.key`), or a failed read naming the record. */
export function recordKey(deps: DeltaDeps, keyPath: string, raw: unknown, where: string): string {
  const key = getPath(raw, keyPath);
  if (typeof key === 'string' && key !== '') return key;
  if (typeof key === 'number') return String(key);
  throw sourceUnreadable(deps.source.name, `members: ${where}: members.delta.key "${keyPath}" gives no key; set it to the path of each record's stable id`);
}

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A snapshot record with a partial change merged on, property by property (a changed list is replaced whole). */
export function mergeChange(raw: unknown, change: unknown): unknown {
  if (!isPlain(raw) || !isPlain(change)) return change;
  const out: Record<string, unknown> = { ...raw };
  for (const [k, v] of Object.entries(change)) out[k] = v;
  return out;
}

