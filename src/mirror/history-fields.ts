/** The fields of a record history row (issue 42): how they are stored and read back. */

/** One field a write changed. */
export interface FieldChange {
  old: string | null;
  new: string | null;
}

/**
 * The fields as stored (issue 42): `{"field": [old, new]}`, a pair per field, where the first form wrote
 * `{"field": {"old": ..., "new": ...}}` (about 15 bytes a field more, a million times over in an initial import's
 * history); rows of either form are read.
 */
export function storedFields(fields: Record<string, FieldChange>): string {
  const out: Record<string, [string | null, string | null]> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = [v.old, v.new];
  return JSON.stringify(out);
}

/** The fields of a stored row, whichever form it was written in. */
export function readStoredFields(text: string): Record<string, FieldChange> {
  const stored = JSON.parse(text) as Record<string, [string | null, string | null] | FieldChange>;
  const out: Record<string, FieldChange> = {};
  for (const [k, v] of Object.entries(stored)) out[k] = Array.isArray(v) ? { old: v[0], new: v[1] } : v;
  return out;
}

