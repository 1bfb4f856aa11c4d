/**
 * A code beside a name (issue 45): a department given as `department_uuid` and `department` (Gusto), or as ADP's
 * organisational unit of type Department with `nameCode.codeValue` and `nameCode.shortName`; a position as a job code
 * and its name. Proposed as `department` + `department_name` (and `position` + `position_name`), so the code is the
 * id and a renamed department keeps it. The two keys sit side by side: the same parent path.
 */
import { formatPath } from '../../desired/index.js';
import { allWords, lastWords } from './rules.js';
import type { Sample, SampleKey } from './sample.js';
import { preferVariants } from './lists.js';

/** A code and the name beside it. */
export interface CodeAndName {
  code: SampleKey;
  name: SampleKey;
}

/** What a unit is called, and what its code looks like. */
export interface UnitKind {
  /** Words somewhere in the path that say what the value belongs to. */
  unit: RegExp;
  /** The last step's words of a code. */
  code: RegExp;
}

export const DEPARTMENT_UNIT: UnitKind = { unit: /(^| )(department|dept)( |$)/, code: /(^| )(id|code|uuid|guid|number|no|oid|key)$/ };
/** Positions: a job's catalog code (an instance's uuid is one per person, not a position). */
export const POSITION_UNIT: UnitKind = { unit: /(^| )(job|jobs|position)( |$)/, code: /(^| )(job )?(code|number|no)$/ };

const NAME = /(^| )(name|short name|long name|title|label)$/;

const parentOf = (k: SampleKey) => formatPath(k.steps.slice(0, -1));
/** A step that says what kind an element is (`typeCode`, `type`): its values are the same for every unit. */
const underDiscriminator = (k: SampleKey) => k.steps.some((s) => s.kind === 'key' && /^(typeCode|type|typeName|kind)$/.test(s.key));
const isLatestCopy = (k: SampleKey) => k.steps.some((s) => s.kind === 'index' && s.index < 0);
/** The same value in every record that has one (ADP's "Department" of typeCode): no id. */
const constant = (sample: Sample, k: SampleKey) => sample.kind === 'json' && k.filled >= 2 && k.values.length === 1;

/** The code and name of a unit, side by side; undefined when the sample has no such pair. */
export function codeAndName(sample: Sample, kind: UnitKind): CodeAndName | undefined {
  const found = sample.keys.filter((k) => kind.unit.test(allWords(k.steps)) && !underDiscriminator(k) && !isLatestCopy(k) && (sample.kind === 'csv' || k.filled > 0));
  // The primary work assignment's unit, not the first one's (lists.ts).
  const inUnit = preferVariants(found, (k) => k, false);
  const byFill = (a: SampleKey, b: SampleKey) => b.filled - a.filled;
  const codes = inUnit.filter((k) => kind.code.test(lastWords(k.steps)) && !constant(sample, k)).sort(byFill);
  const names = inUnit.filter((k) => {
    const last = lastWords(k.steps);
    return NAME.test(last) || kind.unit.test(last);
  });
  for (const code of codes) {
    const name = names.filter((n) => n !== code && parentOf(n) === parentOf(code) && !kind.code.test(lastWords(n.steps))).sort(byFill)[0];
    if (name) return { code, name };
  }
  return undefined;
}
