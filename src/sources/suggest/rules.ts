/**
 * How `sources suggest` recognises a field by its key or column name. A name becomes words (`employeeHireDate`,
 * `Employee_Hire_Date` and `/root/hireDate` all end in `hire date`); each target field has rules tried in order,
 * each a pattern over those words and how sure a match is. The first rule a key matches decides its confidence; among
 * keys, the earlier rule wins, then the key more records fill, then the shallower, then the one met first.
 */
import type { PathStep } from '../../desired/index.js';

/** How sure a proposed line is. */
export type Confidence = 'sure' | 'likely' | 'guess';

/** The fields `sources suggest` proposes; `first_name` and `last_name` become a display_name template. */
export type SuggestField = 'id' | 'display_name' | 'first_name' | 'last_name' | 'email' | 'phone' | 'title' | 'department_path' | 'department' | 'status' | 'start_date' | 'end_date';

/** One rule: a pattern over the key's words; `null` confidence: a match rules the key out for this field. */
export type Rule = [RegExp, Confidence | null];

const EMAIL = 'e ?mails?( address(es)?)?';

/** The rules of each field, in the order they are tried. */
export const RULES: Record<SuggestField, Rule[]> = {
  id: [
    [/(department|dept|manager|supervisor|position|org|organization|location|company|customer|tenant|cost|photo|etag|division|team|site|report) (id|number|code)$/, null],
    [/^(root )?(id|employee (id|number|no)|emp (id|no)|user id|worker id|person id|personnel (id|number)|staff (id|number)|employee)$/, 'sure'],
    [/(^| )(employee|worker|person|personnel|staff|emp|user) (id|number|no)$/, 'likely'],
    [/(^| )external id$/, 'likely'],
    [/(^| )(id|uuid|guid)$/, 'guess'],
  ],
  display_name: [
    [/(^| )(display name|full name|formatted|formatted name)$/, 'sure'],
    [/(^| )(preferred|legal|common) name$/, 'likely'],
    [/^(name|cn)$/, 'guess'],
  ],
  first_name: [[/(^| )(first|given|fore) ?name$/, 'sure']],
  last_name: [[/(^| )(last name|family name|surname|sur name|sn)$/, 'sure']],
  email: [
    [new RegExp(`(^| )(personal|home|private|other) ${EMAIL}$`), 'guess'],
    [new RegExp(`(^| )(work|primary|business|company|corporate|official) ${EMAIL}$`), 'sure'],
    [new RegExp(`(^| )(${EMAIL}|mail)$`), 'sure'],
    [/(^| )(user principal name|upn)$/, 'likely'],
    [/(^| )user ?name$/, 'guess'],
  ],
  phone: [
    [/(^| )(home|private|personal|fax)( phone| phones| telephone| number| phone numbers?)?$/, 'guess'],
    [/(^| )(mobile|cell|cellular)( ?phones?| number| phone numbers?)?$/, 'sure'],
    [/(^| )(work|business|office|primary work)( ?phones?| telephone| phone numbers?)$/, 'sure'],
    [/(^| )(phones?|phone numbers?|telephone( number)?|tel)$/, 'likely'],
  ],
  title: [
    [/(^| )name title$/, null],
    [/(^| )(job |business |position |work )?title$/, 'sure'],
    [/(^| )(position|job|job name|role|job profile)$/, 'likely'],
  ],
  department_path: [
    [/(^| )(department|dept)( name)?$/, 'sure'],
    [/(^| )(org unit path|org unit|orgunit path|supervisory organization|organization unit|division|team|business unit)$/, 'likely'],
  ],
  department: [[/(^| )(department|dept) (id|code|number)$/, 'likely']],
  status: [
    [/(^| )(lifecycle|approval|marital|tax|sync) status$/, null],
    [/(^| )((employment|employee|worker|account|user|active|internal) )?status$/, 'sure'],
    [/(^| )(active|account enabled|enabled|suspended|is active)$/, 'likely'],
    [/(^| )(archived|terminated|inactive|disabled)$/, 'guess'],
  ],
  start_date: [
    [/(^| )((original |latest |employee )?hire|start|join|joining|entry|employment start|contract start|seniority) ?(date|date ?time|on)$/, 'sure'],
    [/(^| )(hired|started|start|joined)$/, 'likely'],
  ],
  end_date: [
    [/(^| )(termination|terminated|end|leave|leaving|exit|separation|last working|last day|contract end|employment end) ?(date|date ?time|day|on)$/, 'sure'],
    [/(^| )(termination|end)$/, 'likely'],
  ],
};

/** Steps that name no field of their own (`attributes.first_name.value`: the field is `first_name`). */
const GENERIC_STEPS = new Set(['value', 'values', 'attributes', 'fields', 'properties', 'data']);

/** A key's words: camelCase, snake_case, kebab-case, `/paths` and `urn:...` split and lower-cased. */
export function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/**
 * The words a path is matched by: the last two steps that name something (qualifiers of filters first, so
 * `emails[type=work].value` reads `work emails`, `name.givenName` reads `name given name`).
 */
export function pathWords(steps: PathStep[]): string {
  const named: string[][] = [];
  let qualifier: string[] = [];
  for (const s of steps) {
    if (s.kind === 'filter') qualifier = qualifierOf(s.where[0]!);
    else if (s.kind === 'key' && !GENERIC_STEPS.has(s.key)) {
      named.push([...qualifier, ...wordsOf(s.key)]);
      qualifier = [];
    } else if (s.kind === 'key' && qualifier.length > 0 && named.length > 0) {
      // `emails[type=work].value`: the qualifier belongs to the step before the filter.
      named[named.length - 1] = [...qualifier, ...named[named.length - 1]!];
      qualifier = [];
    }
  }
  if (qualifier.length > 0 && named.length > 0) named[named.length - 1] = [...qualifier, ...named[named.length - 1]!];
  return named.slice(-2).flat().join(' ');
}

/** The words a filter adds to the step before it: `[type=work]` gives `work`, `[primary=true]` gives `primary`. */
function qualifierOf(w: { key: string[]; value: string }): string[] {
  if (w.value === 'true') return wordsOf(w.key[w.key.length - 1]!);
  if (w.value === 'false') return [];
  return wordsOf(w.value);
}

/** The first rule of `field` the words match: its index and confidence; undefined when none (or a rule rules it out). */
export function matchRule(field: SuggestField, words: string): { rule: number; confidence: Confidence } | undefined {
  const rules = RULES[field];
  for (let i = 0; i < rules.length; i++) {
    const [pattern, confidence] = rules[i]!;
    if (pattern.test(words)) return confidence === null ? undefined : { rule: i, confidence };
  }
  return undefined;
}
