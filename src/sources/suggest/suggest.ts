/**
 * `orgsync sources suggest`: a proposed `fields:` mapping from a sample's keys or columns (rules.ts), checked against
 * the values the sample holds (checks.ts), printed as a YAML fragment to paste (made by the yaml library), each line
 * with how sure it is and the key it matched, and closing with the fields it found nothing for, each with why. With
 * a preset, the preset's own fields are tried on the sample first; only those that find nothing are proposed. With
 * `--entity departments`, a departments payload gets department fields.
 */
import { Document, Scalar, YAMLSeq, type Node, type YAMLMap } from 'yaml';
import { PRESET_NAMES, PRESETS, type PresetName } from '../../config/presets/index.js';
import { compileField, jsonLookup } from '../../desired/index.js';
import { OrgsyncError } from '../../shared/errors.js';
import { statusMapOf, valueProblem } from './checks.js';
import { codeAndName, DEPARTMENT_UNIT, POSITION_UNIT } from './code.js';
import { preferVariants } from './lists.js';
import { matchRule, pathWords, type Confidence, type SuggestField } from './rules.js';
import { readSample, type Sample, type SampleKey } from './sample.js';

/** One proposed line of the mapping. */
export interface Proposal {
  field: string;
  /** The field spec: a path, a column, a `{first} {last}` template, or a list of them (the first non-empty wins). */
  spec: string | string[];
  confidence: Confidence;
  /** The keys or columns it matched. */
  matched: string[];
}

/** A field the sample gave nothing for, and why. */
export interface Missing {
  field: string;
  why: string;
}

/** A preset field tried on the sample. */
export interface PresetField {
  field: string;
  spec: string | string[];
  /** Records that gave it a value. */
  filled: number;
}

/** The entities `sources suggest` proposes fields for. */
export type SuggestEntity = 'members' | 'departments';

/** What `sources suggest` found. */
export interface Suggestion {
  sample: Sample;
  entity: SuggestEntity;
  preset?: { name: PresetName; matching: PresetField[]; missing: PresetField[] };
  proposals: Proposal[];
  /** The status_map of the proposed status key, from the values seen; `unknown`: values to map by hand. */
  statusMap?: { map: Record<string, string>; unknown: string[] };
  /** The fields it found nothing for, each with why. */
  missing: Missing[];
}

const CONFIDENCE_RANK: Record<Confidence, number> = { sure: 0, likely: 1, guess: 2 };

/** A key that matched a field by name and passed the checks of its values. */
interface Candidate {
  key: SampleKey;
  words: string;
  rule: number;
  confidence: Confidence;
  order: number;
}

/** The keys that fit `field`, best first, and why others that matched by name were passed over. */
function candidates(sample: Sample, field: SuggestField): { ranked: Candidate[]; rejected: string[] } {
  const ranked: Candidate[] = [];
  const rejected: string[] = [];
  sample.keys.forEach((key, order) => {
    const words = pathWords(key.steps);
    const m = matchRule(field, words);
    if (!m) return;
    // `[-1]` is the latest of a history: kept for end dates only (elsewhere it repeats `[0]`).
    if (field !== 'end_date' && key.steps.some((s) => s.kind === 'index' && s.index < 0)) return;
    const problem = sample.kind === 'json' ? valueProblem(field, key, words) : undefined;
    if (problem !== undefined) {
      if (!rejected.includes(problem)) rejected.push(problem);
      return;
    }
    let confidence = m.confidence;
    if (sample.kind === 'json' && key.filled === 0) confidence = 'guess';
    ranked.push({ key, words, rule: m.rule, confidence, order });
  });
  ranked.sort((a, b) => compare(a, b, field));
  return { ranked: oneOfEachList(ranked, field), rejected };
}

/** One key of each list element (lists.ts): the primary or typed element over `[0]`, for an end date the latest. */
const oneOfEachList = (ranked: Candidate[], field: SuggestField): Candidate[] => preferVariants(ranked, (c) => c.key, field === 'end_date');

/** Negative when `a` is the better key: surer, an earlier rule, more records filled, shallower, met first. */
function compare(a: Candidate, b: Candidate, field: SuggestField): number {
  const inList = (c: Candidate) => (c.key.steps.some((s) => s.kind !== 'key') ? 1 : 0);
  const by = [
    CONFIDENCE_RANK[a.confidence] - CONFIDENCE_RANK[b.confidence],
    // The record's own id and status, not those of an element of a list in it (ADP's workAssignments[0].itemID,
    // Gusto's terminations[0].active).
    field === 'id' || field === 'status' ? inList(a) - inList(b) : 0,
    a.rule - b.rule,
    b.key.filled - a.key.filled,
    a.key.steps.length - b.key.steps.length,
    a.order - b.order,
  ];
  return by.find((d) => d !== 0) ?? 0;
}

/** A proposal from the best candidate. */
const proposalOf = (field: string, c: Candidate): Proposal => ({ field, spec: c.key.path, confidence: c.confidence, matched: [c.key.path] });

/** The list a key belongs to (`emails[type=work].value` and `emails[0].value` are one list). */
const listOf = (k: SampleKey) => {
  const at = k.steps.findLastIndex((s) => s.kind !== 'key');
  return at < 0 ? k.path : JSON.stringify(k.steps.slice(0, at));
};

/**
 * Alternatives of a field from different lists, best first (work before personal), at most `max`: a fallback is
 * added only while the keys picked leave records of the sample without a value.
 */
function alternatives(field: string, ranked: Candidate[], max: number, records: number): Proposal | undefined {
  const picked: Candidate[] = [];
  for (const c of ranked) {
    if (picked.length >= max || picked.some((p) => p.key.filled >= records)) break;
    if (!picked.some((p) => listOf(p.key) === listOf(c.key))) picked.push(c);
  }
  if (picked.length === 0) return undefined;
  if (picked.length === 1) return proposalOf(field, picked[0]!);
  return { field, spec: picked.map((p) => p.key.path), confidence: picked[0]!.confidence, matched: picked.map((p) => p.key.path) };
}

const lower = (a: Confidence, b: Confidence): Confidence => (CONFIDENCE_RANK[a] >= CONFIDENCE_RANK[b] ? a : b);

/**
 * display_name: a display-name key when one is sure (and not "Family, Given"), else first and last name as a
 * template; a preferred first name comes first as a required placeholder, the legal one after it.
 */
function displayName(sample: Sample): { proposal?: Proposal; rejected: string[] } {
  const display = candidates(sample, 'display_name');
  const first = candidates(sample, 'first_name').ranked[0];
  const last = candidates(sample, 'last_name').ranked[0];
  const preferred = candidates(sample, 'preferred_first_name').ranked.find((c) => sample.kind === 'csv' || c.key.filled > 0);
  const own = display.ranked[0] ? proposalOf('display_name', display.ranked[0]) : undefined;
  let template: Proposal | undefined;
  if (first && last) {
    const legal = `{${first.key.path}} {${last.key.path}}`;
    const confidence = lower(first.confidence, last.confidence);
    template = preferred
      ? { field: 'display_name', spec: [`{!${preferred.key.path}} {${last.key.path}}`, legal], confidence, matched: [preferred.key.path, first.key.path, last.key.path] }
      : { field: 'display_name', spec: legal, confidence, matched: [first.key.path, last.key.path] };
  }
  if (own && (own.confidence === 'sure' || !template || CONFIDENCE_RANK[own.confidence] < CONFIDENCE_RANK[template.confidence])) return { proposal: own, rejected: display.rejected };
  return { ...(template ?? own ? { proposal: (template ?? own)! } : {}), rejected: display.rejected };
}

/** What to look for, said in the closing list when nothing was found. */
const HINT: Record<string, string> = {
  id: 'an id (id, employeeId, associateOID, uuid)',
  display_name: 'a name (displayName, fullName, or a first and a last name)',
  email: 'an e-mail (email, workEmail, mail)',
  phone: 'a phone (phone, mobile, cell, telephone)',
  title: 'a job title (title, jobTitle)',
  department: 'a department (department, departmentId, dept_id)',
  status: 'a status (status, active, terminated)',
  start_date: 'a hire or start date (hireDate, startDate)',
  end_date: 'an end or termination date (terminationDate, endDate)',
  name: 'a name (name, title)',
  parent: 'a parent (parent, parentId)',
  sort_order: 'a sort order (sort, order)',
};

/** Why nothing was proposed for `field`: the keys passed over, or what was looked for. */
function whyMissing(sample: Sample, field: string, rejected: string[]): string {
  if (rejected.length > 0) return `${rejected.slice(0, 2).join('; ')}${rejected.length > 2 ? `; and ${rejected.length - 2} more` : ''}`;
  const what = sample.kind === 'csv' ? 'column' : 'key';
  const records = sample.kind === 'json' ? ` in the ${sample.records.length} records looked at` : '';
  return `no ${what} named like ${HINT[field] ?? field}${records}`;
}

/** Collects proposals and what was missing, field by field. */
class Proposals {
  readonly list: Proposal[] = [];
  readonly missing: Missing[] = [];

  constructor(
    private readonly sample: Sample,
    readonly wanted: (field: string) => boolean,
  ) {}

  /** Proposes the best key of `rule` as `field` (or several from different lists, up to `max`); notes it missing otherwise. */
  one(field: string, rule: SuggestField, max = 1): Candidate | undefined {
    if (!this.wanted(field)) return undefined;
    const { ranked, rejected } = candidates(this.sample, rule);
    const p = max > 1 ? alternatives(field, ranked, max, this.sample.records.length) : ranked[0] && proposalOf(field, ranked[0]);
    if (p) this.list.push(p);
    else this.missing.push({ field, why: whyMissing(this.sample, field, rejected) });
    return ranked[0];
  }

  add(p: Proposal | undefined, field: string, rejected: string[] = []): void {
    if (!this.wanted(field)) return;
    if (p) this.list.push(p);
    else this.missing.push({ field, why: whyMissing(this.sample, field, rejected) });
  }
}

/** department (and department_name), or department_path: a code with its name, a name alone, or a code alone. */
function departmentOf(sample: Sample, out: Proposals): void {
  const pair = codeAndName(sample, DEPARTMENT_UNIT);
  if (pair && out.wanted('department')) {
    const confidence: Confidence = pair.code.filled > 0 || sample.kind === 'csv' ? 'sure' : 'guess';
    out.list.push({ field: 'department', spec: pair.code.path, confidence, matched: [pair.code.path] });
    out.list.push({ field: 'department_name', spec: pair.name.path, confidence, matched: [pair.name.path] });
    return;
  }
  const { ranked } = candidates(sample, 'department_path');
  if (ranked[0] && out.wanted('department_path')) return void out.list.push(proposalOf('department_path', ranked[0]));
  out.one('department', 'department');
}

/** The member fields the sample seems to have, in the order of a mapping, and those it has nothing for. */
function proposeMembers(sample: Sample, wanted: (field: string) => boolean): { out: Proposals; status?: Candidate } {
  const out = new Proposals(sample, wanted);
  out.one('id', 'id');
  const name = displayName(sample);
  out.add(name.proposal, 'display_name', name.rejected);
  out.one('email', 'email', 2);
  out.one('phone', 'phone', 3);
  out.one('title', 'title');
  departmentOf(sample, out);
  const position = codeAndName(sample, POSITION_UNIT);
  if (position && wanted('position')) {
    out.list.push({ field: 'position', spec: position.code.path, confidence: 'likely', matched: [position.code.path] });
    out.list.push({ field: 'position_name', spec: position.name.path, confidence: 'likely', matched: [position.name.path] });
  }
  const status = out.one('status', 'status');
  out.one('start_date', 'start_date');
  out.one('end_date', 'end_date');
  return { out, ...(status ? { status } : {}) };
}

/** The department fields of a departments payload (`--entity departments`). */
function proposeDepartments(sample: Sample, wanted: (field: string) => boolean): Proposals {
  const out = new Proposals(sample, wanted);
  out.one('id', 'dept_id');
  out.one('name', 'dept_name');
  out.one('parent', 'dept_parent');
  out.one('sort_order', 'dept_sort_order');
  return out;
}

/** No e-mail, phone or first and last name, but a department's name: a departments payload read as members. */
function looksLikeDepartments(found: Proposal[], sample: Sample): boolean {
  const person = found.some((p) => p.field === 'email' || p.field === 'phone' || (p.field === 'display_name' && Array.isArray(p.matched) && p.matched.length > 1));
  return !person && candidates(sample, 'dept_name').ranked.length > 0;
}

type EntityFields = { fields?: Record<string, string | string[]>; items_path?: string };

/** The preset's fields of `entity` tried on the sample: which give a value in some record. */
function tryPreset(sample: Sample, name: PresetName, entity: SuggestEntity): { matching: PresetField[]; missing: PresetField[] } {
  const fragment = PRESETS[name].fragment('https://example.invalid', {}) as Partial<Record<SuggestEntity, EntityFields>>;
  const matching: PresetField[] = [];
  const missing: PresetField[] = [];
  for (const [field, spec] of Object.entries(fragment[entity]?.fields ?? {})) {
    const reader = compileField(spec);
    let filled = 0;
    if (sample.kind === 'json') {
      for (const r of sample.records) {
        const t = reader.text(jsonLookup(r));
        if (typeof t === 'string' && t.trim() !== '') filled++;
      }
    } else {
      // A CSV header has no values: a field matches when every column it names is there.
      const columns = new Set(sample.keys.map((k) => k.path));
      if (reader.names.every((n) => columns.has(n))) filled = 1;
    }
    (filled > 0 ? matching : missing).push({ field, spec, filled });
  }
  return { matching, missing };
}

/** Reads the sample and proposes a mapping; `preset` names a preset whose own fields are tried first. */
export function suggestMapping(file: string, preset?: string, entity: SuggestEntity = 'members'): Suggestion {
  if (preset !== undefined && !(PRESET_NAMES as string[]).includes(preset)) {
    throw new OrgsyncError('USAGE', `sources suggest: --preset ${preset}: no such preset (presets: ${PRESET_NAMES.join(', ')})`);
  }
  const name = preset as PresetName | undefined;
  const itemsPath = name ? (PRESETS[name].fragment('https://example.invalid', {}) as Partial<Record<SuggestEntity, EntityFields>>)[entity]?.items_path : undefined;
  const sample = readSample(file, itemsPath);
  const tried = name ? tryPreset(sample, name, entity) : undefined;
  const covered = new Set(tried?.matching.map((f) => f.field) ?? []);
  // department, department_name and department_path fill the same need.
  if (['department', 'department_path'].some((f) => covered.has(f))) for (const f of ['department', 'department_path', 'department_name']) covered.add(f);
  const wanted = (f: string) => !covered.has(f);
  const base = { sample, entity, ...(name && tried ? { preset: { name, ...tried } } : {}) };
  if (entity === 'departments') {
    const out = proposeDepartments(sample, wanted);
    return { ...base, proposals: out.list, missing: out.missing };
  }
  const { out, status } = proposeMembers(sample, wanted);
  if (!name && looksLikeDepartments(out.list, sample)) out.missing.push({ field: '(entity)', why: 'the records look like departments (no e-mail, phone or person name): run again with --entity departments' });
  const statusMap = status && sample.kind === 'json' && out.list.some((p) => p.field === 'status') ? statusMapOf(status.key, status.words) : undefined;
  return { ...base, proposals: out.list, missing: out.missing, ...(statusMap && Object.keys(statusMap.map).length + statusMap.unknown.length > 0 ? { statusMap } : {}) };
}

const specText = (s: string | string[]) => (Array.isArray(s) ? s.join(' | ') : s);

/** The comments before the mapping: the file, where the records are, and, with a preset, what it already reads. */
function header(s: Suggestion): string[] {
  const before: string[] = [`sources suggest: ${s.sample.file}${s.entity === 'departments' ? ' (departments)' : ''}`];
  if (s.sample.kind === 'json') {
    before.push(s.sample.itemsPath ? `records found under ${s.sample.itemsPath} (items_path: ${s.sample.itemsPath}); ${s.sample.records.length} looked at` : `records: the file is an array; ${s.sample.records.length} looked at`);
  } else before.push(`CSV header: ${s.sample.keys.length} columns`);
  if (s.preset) {
    const p = s.preset;
    before.push(`preset ${p.name}: ${p.matching.length > 0 ? 'its fields that find values here (kept as they are):' : 'none of its fields finds a value here'}`);
    for (const f of p.matching) before.push(`  ${f.field}: ${specText(f.spec)}${s.sample.kind === 'json' ? ` (${f.filled} of ${s.sample.records.length} records)` : ''}`);
    if (p.missing.length > 0) before.push(`preset ${p.name}: finds nothing for ${p.missing.map((f) => `${f.field} (${specText(f.spec)})`).join(', ')}`);
    before.push(s.proposals.length > 0 ? `proposed for the rest (paste under the source's ${s.entity}:, beside preset:):` : 'nothing to propose for the rest');
  } else before.push(`proposed mapping (paste under the source's ${s.entity}:):`);
  return before;
}

/** The closing comment: the fields it found nothing for, each with why. */
function closing(s: Suggestion): string[] {
  if (s.missing.length === 0) return [];
  return ['found nothing for:', ...s.missing.map((m) => `  ${m.field}: ${m.why}`)];
}

/**
 * A spec as YAML: a list in flow style with every path in double quotes, on the field's line with its comment (a
 * path such as `emails[0].value` in an unquoted flow list is not YAML, docs/sources/without-a-preset.md).
 */
function specNode(doc: Document, spec: string | string[]): Node {
  if (!Array.isArray(spec)) return doc.createNode(spec);
  const seq = new YAMLSeq();
  seq.flow = true;
  for (const item of spec) {
    const scalar = new Scalar(item);
    scalar.type = Scalar.QUOTE_DOUBLE;
    seq.items.push(scalar);
  }
  return seq;
}

/** The YAML fragment, with comments saying where the records are, what a preset already reads, and what is missing. */
export function renderSuggestion(s: Suggestion): string {
  const before = header(s);
  const after = closing(s);
  if (s.proposals.length === 0) return `${[...before, ...after].map((l) => `# ${l}`.trimEnd()).join('\n')}\n`;
  const doc = new Document({ fields: {} });
  const fields = doc.get('fields') as YAMLMap;
  for (const p of s.proposals) {
    const value = specNode(doc, p.spec);
    const what = s.sample.kind === 'csv' ? (p.matched.length > 1 ? 'columns' : 'column') : p.matched.length > 1 ? 'keys' : 'key';
    value.comment = ` ${p.confidence}: ${what} ${p.matched.map((m) => JSON.stringify(m)).join(', ')}`;
    fields.set(doc.createNode(p.field), value);
  }
  if (s.statusMap) {
    const map = doc.createNode(s.statusMap.map);
    const unknown = s.statusMap.unknown.length > 0 ? `; map by hand: ${s.statusMap.unknown.map((v) => JSON.stringify(v)).join(', ')}` : '';
    map.comment = ` from the status values seen${unknown}`;
    doc.set('status_map', map);
  }
  doc.commentBefore = before.map((l) => ` ${l}`).join('\n');
  if (after.length > 0) doc.comment = after.map((l) => ` ${l}`).join('\n');
  return doc.toString({ lineWidth: 0 });
}
