/** The fields of a record history row (issue 42): how they are stored and read back. */

/** One field a write changed. */
export interface FieldChange {
  old: string | null;
  new: string | null;
}

/** A field as stored: its value alone when it had none before (a create's every field), else `[old, new]`. */
type StoredField = string | [string | null, string | null];

/**
 * The fields as stored (issue 42): `{"field": "new"}` for a field set where it had no value, `{"field": [old, new]}`
 * otherwise. The first form wrote `{"field": {"old": ..., "new": ...}}`: about 20 bytes a field more, six fields of
 * every member an initial import creates, a million times over. Rows of every form are read.
 */
export function storedFields(fields: Record<string, FieldChange>): string {
  const out: Record<string, StoredField> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v.old === null && v.new !== null ? v.new : [v.old, v.new];
  return JSON.stringify(out);
}

/** The fields of a stored row, whichever form it was written in. */
export function readStoredFields(text: string): Record<string, FieldChange> {
  const stored = JSON.parse(text) as Record<string, StoredField | FieldChange>;
  const out: Record<string, FieldChange> = {};
  for (const [k, v] of Object.entries(stored)) {
    if (typeof v === 'string') out[k] = { old: null, new: v };
    else if (Array.isArray(v)) out[k] = { old: v[0], new: v[1] };
    else out[k] = { old: v.old ?? null, new: v.new ?? null };
  }
  return out;
}
