/**
 * How `sources suggest` recognises a field by its key or column name. A name becomes words (`employeeHireDate`,
 * `Employee_Hire_Date` and `/root/hireDate` all end in `hire date`); each target field has rules tried in order,
 * each a pattern over those words and how sure a match is. The first rule a key matches decides its confidence; among
 * keys, the earlier rule wins, then the key more records fill, then the shallower, then the one met first. What the
 * values say (an address, a date, a status) is checked after, in checks.ts.
 */
import type { PathStep } from '../../desired/index.js';

/** How sure a proposed line is. */
export type Confidence = 'sure' | 'likely' | 'guess';

/**
 * The fields `sources suggest` recognises: `first_name`, `last_name` and `preferred_first_name` become a display_name
 * template; `department_code` / `department_name` and `position_code` / `position_name` pairs are found in code.ts.
 */
export type SuggestField =
  | 'id'
  | 'display_name'
  | 'first_name'
  | 'last_name'
  | 'preferred_first_name'
  | 'email'
  | 'phone'
  | 'title'
  | 'department_path'
  | 'department'
  | 'status'
  | 'start_date'
  | 'end_date'
  | 'dept_id'
  | 'dept_name'
  | 'dept_parent'
  | 'dept_sort_order';

/** One rule: a pattern over the key's words; `null` confidence: a match rules the key out for this field. */
export type Rule = [RegExp, Confidence | null];

const EMAIL = 'e ?mails?( address(es)?)?';
/** Words of a phone number's key (a list of them, or one). */
const PHONE = '(phones?|phone numbers?|mobiles?|mobile phones?|cell( phones?)?|cellular|landlines?|telephones?( numbers?)?|tel)';

/** `a ... b` or `b ... a` anywhere in the words. */
const both = (a: string, b: string) => new RegExp(`(^| )${a}( .*)? ${b}( |$)|(^| )${b}( .*)? ${a}( |$)`);

/** Keys of other records a record points at (its manager's id, its company's id): never its own id or name. */
const OTHERS = '(department|dept|manager|supervisor|position|org|organization|organizational|location|company|customer|tenant|cost|photo|etag|division|team|site|reports? to|item|job|assignment|compensation|version|parent|unit)';

/** The rules of each field, in the order they are tried. */
export const RULES: Record<SuggestField, Rule[]> = {
  id: [
    [new RegExp(`(^| )${OTHERS} (id|number|code|uuid|guid|oid)$`), null],
    [/^(root )?(id|uuid|guid|oid|employee (id|number|no)|emp (id|no)|user id|worker id|person id|personnel (id|number)|staff (id|number)|employee|[a-z]+ (oid|uuid|guid))$/, 'sure'],
    [/(^| )(employee|worker|person|personnel|staff|emp|user|associate) (id|number|no)$/, 'likely'],
    [/(^| )external id$/, 'likely'],
    [/(^| )(id|uuid|guid)$/, 'guess'],
  ],
  display_name: [
    [/(^| )(reports? to|manager|supervisor)( |$)/, null],
    [/(^| )(display name|full name|formatted|formatted name)$/, 'sure'],
    [/(^| )(preferred|legal|common) name$/, 'likely'],
    [/^(name|cn)$/, 'guess'],
  ],
  first_name: [
    [/(^| )(preferred|nick|reports? to|manager|birth)( |$)/, null],
    [/(^| )(first|given|fore) ?name$/, 'sure'],
  ],
  last_name: [
    [/(^| )(preferred|nick|reports? to|manager|birth|maiden)( |$)/, null],
    [/(^| )(last name|family name|surname|sur name|sn)$/, 'sure'],
  ],
  preferred_first_name: [
    [/(^| )(reports? to|manager)( |$)/, null],
    [/(^| )(preferred (first |given )?name|preferred name (first|given) name|nick ?name|known as)$/, 'sure'],
  ],
  email: [
    [new RegExp(`(^| )(reports? to|manager|supervisor)( |$)`), null],
    [both('(personal|home|private|other)', `(${EMAIL}|mail)`), 'guess'],
    [both('(work|primary|business|company|corporate|official)', `(${EMAIL}|mail)`), 'sure'],
    [new RegExp(`(^| )(${EMAIL}|mail)$`), 'sure'],
    [/(^| )(user principal name|upn)$/, 'likely'],
    [/(^| )user ?name$/, 'guess'],
  ],
  phone: [
    [/(^| )(fax|faxes|pagers?|reports? to|manager)( |$)/, null],
    [/(^| )(area dialing|country dialing|dial number|access|extension|item id|name code|short name|type code|code)$/, null],
    [both('(personal|home|private)', PHONE), 'guess'],
    [/(^| )(mobile|cell|cellular|mobiles)( |$)/, 'sure'],
    [both('(work|business|office)', PHONE), 'sure'],
    [new RegExp(`(^| )${PHONE}( formatted number| number)?$`), 'likely'],
  ],
  title: [
    [/(^| )(name title|reports? to)( |$|$)/, null],
    [/(^| )(job |business |position |work )?title$/, 'sure'],
    [/(^| )(position|job|job name|role|job profile)$/, 'likely'],
  ],
  department_path: [
    [/(^| )(department|dept)( name)?$/, 'sure'],
    [/(^| )(org unit path|org unit|orgunit path|supervisory organization|organization unit|division|team|business unit)$/, 'likely'],
  ],
  department: [[/(^| )(department|dept) (id|code|number|uuid|guid)$/, 'likely']],
  status: [
    [/(^| )(lifecycle|approval|marital|tax|sync|onboarding|military|student|citizenship|veteran|payroll|processing|disabled indicator|disability|shareholder)( |$)/, null],
    [/(^| )((employment|employee|worker|account|user|active|internal|assignment) )?status( code)?$/, 'sure'],
    [/(^| )(active|account enabled|enabled|suspended|is active)$/, 'likely'],
    [/(^| )(archived|terminated|inactive|disabled|is terminated)$/, 'likely'],
  ],
  start_date: [
    [/(^| )(birth|of birth|review|compensation|effective)( |$)/, null],
    [/(^| )((original |latest |employee |actual )?hire|start|join|joining|entry|employment start|contract start|seniority) ?(date|date ?time|on)$/, 'sure'],
    [/(^| )(hired|started|start|joined|hired at)$/, 'likely'],
  ],
  end_date: [
    [/(^| )(birth|review|compensation|military discharge)( |$)/, null],
    [/(^| )(termination|terminated|end|leave|leaving|exit|separation|last working|last day|contract end|employment end) ?(date|date ?time|day|on)$/, 'sure'],
    [/(^| )terminations?( effective)? (date|day)$/, 'sure'],
    [/(^| )(termination|end)$/, 'likely'],
  ],
  dept_id: [
    [/(^| )(parent|company|manager|employees?|contractors?|cost|location|tenant|version)( |$)/, null],
    [/^(id|uuid|guid|code|department (id|code|number|uuid|no)|dept (id|no|code|number)|org unit id|unit (id|code))$/, 'sure'],
    [/(^| )(id|code|uuid|guid)$/, 'guess'],
  ],
  dept_name: [
    [/(^| )(parent|company|manager|employees?|contractors?)( |$)/, null],
    [/^(name|title|department name|dept name|display name|department|department title|unit name)$/, 'sure'],
    [/(^| )(short name|long name|name|title)$/, 'likely'],
  ],
  dept_parent: [[/(^| )(parent|parent department|superior|reports? to)( (id|code|uuid|guid|path|name|department id))?$/, 'likely']],
  dept_sort_order: [[/(^| )(sort( order)?|order|rank|sequence)$/, 'guess']],
};

/** Steps that name no field of their own (`attributes.first_name.value`: the field is `first_name`). */
const GENERIC_STEPS = new Set(['value', 'values', 'attributes', 'fields', 'properties', 'data']);
/** Words that end a key without naming anything (`emailUri`, `idValue`, ADP's `codeValue`, `primaryIndicator`). */
const GENERIC_TAIL = new Set(['value', 'uri', 'indicator']);

/** A key's words: camelCase, snake_case, kebab-case, digits, `/paths` and `urn:...` split and lower-cased; numbers dropped. */
export function wordsOf(key: string): string[] {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-zA-Z])(\d)/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '' && !/^\d+$/.test(w));
  while (words.length > 1 && GENERIC_TAIL.has(words[words.length - 1]!)) words.pop();
  return words;
}

/** The words a filter adds to the step before it: `[type=work]` gives `work`, `[primary=true]` gives `primary`. */
function qualifierOf(w: { key: string[]; value: string }): string[] {
  if (w.value === 'true') return wordsOf(w.key[w.key.length - 1]!);
  if (w.value === 'false') return [];
  return wordsOf(w.value);
}

/** Each step that names something, with the words of the filter after it in front (`emails[type=work]`: work emails). */
function namedSteps(steps: readonly PathStep[]): string[][] {
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
  return named;
}

/** Words joined, a word repeated right after itself said once (`workerID.idValue`: worker id). */
const joined = (words: string[]): string => words.filter((w, i) => w !== words[i - 1]).join(' ');

/**
 * The words a path is matched by: the last two steps that name something (qualifiers of filters first, so
 * `emails[type=work].value` reads `work emails`, `name.givenName` reads `name given name`).
 */
export function pathWords(steps: readonly PathStep[]): string {
  return joined(namedSteps(steps).slice(-2).flat());
}

/** The words of every step of a path (for what a value belongs to: `units[typeCode.codeValue=Department].nameCode.codeValue`). */
export function allWords(steps: readonly PathStep[]): string {
  return joined(namedSteps(steps).flat());
}

/** The words of the last step that names something (`nameCode.shortName`: short name). */
export function lastWords(steps: readonly PathStep[]): string {
  return joined(namedSteps(steps).at(-1) ?? []);
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
