/**
 * Where a config problem is: the YAML file's `line:column` of a key path, and the keys the schema allows at a path
 * (for "did you mean"). Used by the loader to make every config error point into the file.
 */
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';

/**
 * `file:line:col` of the key at `path` in the parsed document (of an array item: the item). A path the file does not
 * have (a missing key, a key a preset added) is located at the deepest enclosing key it does have.
 */
export function yamlLocator(doc: Document, lineCounter: LineCounter, file: string): (path: readonly PropertyKey[]) => string {
  return (path) => {
    let node: unknown = doc.contents;
    let offset: number | undefined = (doc.contents as Node | null)?.range?.[0];
    for (const step of path) {
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
        if (!pair) break;
        offset = (pair.key as Node).range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof step === 'number' && node.items[step] !== undefined) {
        const item = node.items[step] as Node;
        offset = item.range?.[0] ?? offset;
        node = item;
      } else break;
    }
    if (offset === undefined) return file;
    const { line, col } = lineCounter.linePos(offset);
    return `${file}:${line}:${col}`;
  };
}

/** yamlLocator() of the config file at `file` (read again: for problems found after loading, such as unreadable files). */
export function fileLocator(file: string): (path: readonly PropertyKey[]) => string {
  const lineCounter = new LineCounter();
  return yamlLocator(parseDocument(readFileSync(file, 'utf8'), { lineCounter }), lineCounter, file);
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  values?: unknown[];
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas `schema` may stand for once wrappers (defaults, pipes, optional) are peeled and unions spread. */
function variants(schema: z.ZodType, input: unknown): z.ZodType[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in ?? def.getter?.();
  if (inner && ['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch', 'nonoptional', 'pipe', 'lazy'].includes(def.type)) return variants(inner, input);
  if (def.type !== 'union' || !def.options) return [schema];
  let options = def.options;
  // A discriminated union (sources by `type`): only the option the input names, when it names one.
  const tag = def.discriminator && input && typeof input === 'object' ? (input as Record<string, unknown>)[def.discriminator] : undefined;
  if (def.discriminator && tag !== undefined) {
    const named = options.filter((o) => defOf(defOf(o).shape?.[def.discriminator!] ?? o).values?.includes(tag));
    if (named.length > 0) options = named;
  }
  return options.flatMap((o) => variants(o, input));
}

/** The keys the object at `path` of `input` may have under `schema` (several objects of a union: all their keys). */
export function schemaKeysAt(schema: z.ZodType, path: readonly PropertyKey[], input: unknown): string[] | undefined {
  let current: { schema: z.ZodType; input: unknown }[] = [{ schema, input }];
  for (const step of path) {
    const next: { schema: z.ZodType; input: unknown }[] = [];
    for (const c of current) {
      const value = c.input && typeof c.input === 'object' ? (c.input as Record<PropertyKey, unknown>)[step] : undefined;
      for (const v of variants(c.schema, c.input)) {
        const def = defOf(v);
        if (def.type === 'object' && def.shape && typeof step === 'string' && def.shape[step]) next.push({ schema: def.shape[step], input: value });
        else if (def.type === 'array' && def.element && typeof step === 'number') next.push({ schema: def.element, input: value });
        else if (def.type === 'record' && def.valueType) next.push({ schema: def.valueType, input: value });
      }
    }
    current = next;
  }
  const keys = new Set<string>();
  for (const c of current) for (const v of variants(c.schema, c.input)) for (const k of Object.keys(defOf(v).shape ?? {})) keys.add(k);
  return keys.size > 0 ? [...keys] : undefined;
}
