/**
 * What the values of a sample say about a key `sources suggest` matched by name (JSON samples only; a CSV header has
 * no values): an e-mail key holds addresses, a date key dates (never a boolean), a status key status values or
 * booleans, a display name is not "Family, Given", a phone has digits enough. A key that fails is passed over, and
 * the closing list says why when nothing else was found.
 */
import { parseHrDate } from '../../shared/dates.js';
import type { SampleKey } from './sample.js';
import type { SuggestField } from './rules.js';

/** Status values `sources suggest` knows, and what each becomes (a status_map entry). */
export const STATUS_WORDS: [RegExp, 'active' | 'suspended' | 'left'][] = [
  [/^(active|a|enabled|employed|current|working|hired|onboarding)$/i, 'active'],
  [/^(inactive|i|l|leave|on leave|suspended|paused|disabled|archived|furlough(ed)?)$/i, 'suspended'],
  [/^(terminated|t|left|former|separated|ended|exited|deleted|retired|deceased)$/i, 'left'],
];

/** What the booleans of a status key mean, by the key's words: `terminated: true` is a leaver, `active: false` suspended. */
export function booleanStatus(words: string): Record<'true' | 'false', 'active' | 'suspended' | 'left'> | undefined {
  if (/(^| )(terminated|is terminated|left|deleted)$/.test(words)) return { true: 'left', false: 'active' };
  if (/(^| )(inactive|disabled|suspended|archived)$/.test(words)) return { true: 'suspended', false: 'active' };
  if (/(^| )(active|active status|enabled|is active|account enabled)$/.test(words)) return { true: 'active', false: 'suspended' };
  return undefined;
}

const shown = (values: string[]) => values.slice(0, 3).map((v) => JSON.stringify(v)).join(', ');
const isBoolean = (k: SampleKey) => k.types.size === 1 && k.types.has('boolean');
const TRUE_TEXT = /^(true|t|1|yes|y)$/i;
const FALSE_TEXT = /^(false|f|0|no|n)$/i;
/** Booleans, or text that reads as them (`t`/`f` of OData v2, `1`/`0` of a report, `yes`/`no`). */
const isBooleanish = (k: SampleKey) => isBoolean(k) || (k.values.length > 0 && k.values.every((v) => TRUE_TEXT.test(v) || FALSE_TEXT.test(v)));
const isDate = (v: string) => !('problem' in parseHrDate(v, 'UTC')) && !('none' in parseHrDate(v, 'UTC'));
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Why the values of `key` do not fit `field` (undefined: they fit, or there are none to judge). */
export function valueProblem(field: SuggestField, key: SampleKey, words: string): string | undefined {
  const values = key.values;
  if (values.length === 0) return undefined;
  switch (field) {
    case 'start_date':
    case 'end_date':
      if (isBoolean(key)) return `"${key.path}" holds true/false, not dates`;
      return values.some(isDate) ? undefined : `"${key.path}" holds ${shown(values)}, not dates`;
    case 'email':
      return values.some((v) => EMAIL.test(v)) ? undefined : `"${key.path}" holds ${shown(values)}, no e-mail address`;
    case 'phone':
      return values.some((v) => v.replace(/\D/g, '').length >= 7) ? undefined : `"${key.path}" holds ${shown(values)}, no phone number`;
    case 'status':
      if (isBooleanish(key)) return booleanStatus(words) ? undefined : `"${key.path}" holds ${shown(values)}, but its name says no status`;
      return values.every((v) => STATUS_WORDS.some(([re]) => re.test(v))) || values.some((v) => STATUS_WORDS.some(([re, s]) => s === 'left' && re.test(v)))
        ? undefined
        : `"${key.path}" holds ${shown(values)}, no status (active, leave, terminated)`;
    case 'display_name':
      // "Okafor, Maya": a formatted name in the order of a list, not the one people go by.
      return values.every((v) => /^[^,]+, [^,]+$/.test(v)) ? `"${key.path}" holds names as "Family, Given" (${shown(values.slice(0, 1))})` : undefined;
    case 'id':
    case 'dept_id':
      return isBoolean(key) ? `"${key.path}" holds true/false` : undefined;
    default:
      return isBoolean(key) ? `"${key.path}" holds true/false` : undefined;
  }
}

/** The status_map of a status key from the values seen: known words mapped, the rest named to be mapped by hand. */
export function statusMapOf(key: SampleKey, words: string): { map: Record<string, 'active' | 'suspended' | 'left'>; unknown: string[] } {
  const map: Record<string, 'active' | 'suspended' | 'left'> = {};
  const unknown: string[] = [];
  const booleans = isBooleanish(key) ? booleanStatus(words) : undefined;
  if (booleans) {
    for (const v of key.values) map[v] = TRUE_TEXT.test(v) ? booleans.true : booleans.false;
    return { map, unknown };
  }
  for (const v of key.values) {
    const known = STATUS_WORDS.find(([re]) => re.test(v));
    if (known) map[v] = known[1];
    else unknown.push(v);
  }
  return { map, unknown };
}
