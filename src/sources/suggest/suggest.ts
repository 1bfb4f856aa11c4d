/**
 * `orgsync sources suggest`: a proposed `fields:` mapping from a sample's keys or columns (rules.ts), printed as a
 * YAML fragment to paste (made by the yaml library), each line with how sure it is and the key it matched. With a
 * preset, the preset's own fields are tried on the sample first; only those that find nothing are proposed.
 */
import { Document, type YAMLMap } from 'yaml';
import { PRESET_NAMES, PRESETS, type PresetName } from '../../config/presets/index.js';
import { compileField, jsonLookup } from '../../desired/index.js';
import { OrgsyncError } from '../../shared/errors.js';
import { matchRule, pathWords, type Confidence, type SuggestField } from './rules.js';
import { readSample, type Sample, type SampleKey } from './sample.js';

/** One proposed line of the mapping. */
export interface Proposal {
  field: string;
  /** The field spec: a path, a column, or a `{first} {last}` template. */
  spec: string;
  confidence: Confidence;
  /** The keys or columns it matched. */
  matched: string[];
}

/** A preset field tried on the sample. */
export interface PresetField {
  field: string;
  spec: string | string[];
  /** Records that gave it a value. */
  filled: number;
}

/** What `sources suggest` found. */
export interface Suggestion {
  sample: Sample;
  preset?: { name: PresetName; matching: PresetField[]; missing: PresetField[] };
  proposals: Proposal[];
}

const CONFIDENCE_RANK: Record<Confidence, number> = { sure: 0, likely: 1, guess: 2 };
const DOWNGRADE: Record<Confidence, Confidence> = { sure: 'likely', likely: 'guess', guess: 'guess' };

interface Candidate {
  key: SampleKey;
  rule: number;
  confidence: Confidence;
  order: number;
}

/** The best key for `field`, or undefined. A JSON key no record fills, or an e-mail without an @, is trusted less. */
function best(sample: Sample, field: SuggestField): Candidate | undefined {
  let top: Candidate | undefined;
  sample.keys.forEach((key, order) => {
    const m = matchRule(field, pathWords(key.steps));
    if (!m) return;
    let confidence = m.confidence;
    if (sample.kind === 'json' && key.filled === 0) confidence = 'guess';
    else if (field === 'email' && key.example !== undefined && !key.example.includes('@')) confidence = DOWNGRADE[confidence];
    const c: Candidate = { key, rule: m.rule, confidence, order };
    if (top === undefined || better(c, top)) top = c;
  });
  return top;
}

function better(a: Candidate, b: Candidate): boolean {
  const by = [CONFIDENCE_RANK[a.confidence] - CONFIDENCE_RANK[b.confidence], a.rule - b.rule, b.key.filled - a.key.filled, a.key.steps.length - b.key.steps.length, a.order - b.order];
  return (by.find((d) => d !== 0) ?? 0) < 0;
}

const lower = (a: Confidence, b: Confidence): Confidence => (CONFIDENCE_RANK[a] >= CONFIDENCE_RANK[b] ? a : b);

/** display_name: a display-name key when one is sure, else first and last name as a template, else the best there is. */
function displayName(sample: Sample): Proposal | undefined {
  const display = best(sample, 'display_name');
  const first = best(sample, 'first_name');
  const last = best(sample, 'last_name');
  const template: Proposal | undefined =
    first && last ? { field: 'display_name', spec: `{${first.key.path}} {${last.key.path}}`, confidence: lower(first.confidence, last.confidence), matched: [first.key.path, last.key.path] } : undefined;
  const own: Proposal | undefined = display ? { field: 'display_name', spec: display.key.path, confidence: display.confidence, matched: [display.key.path] } : undefined;
  if (own && (own.confidence === 'sure' || !template || CONFIDENCE_RANK[own.confidence] < CONFIDENCE_RANK[template.confidence])) return own;
  return template ?? own;
}

/** The proposals for every field the sample seems to have, in the order of a mapping. */
function propose(sample: Sample, wanted: (field: string) => boolean): Proposal[] {
  const out: Proposal[] = [];
  const one = (field: SuggestField, as: string = field) => {
    const c = best(sample, field);
    if (c && wanted(as)) out.push({ field: as, spec: c.key.path, confidence: c.confidence, matched: [c.key.path] });
    return c;
  };
  one('id');
  const name = displayName(sample);
  if (name && wanted('display_name')) out.push(name);
  one('email');
  one('phone');
  one('title');
  // A department name becomes a path of departments (works for a source of members alone); an id needs departments.
  if (!wanted('department_path') || !one('department_path')) one('department');
  one('status');
  one('start_date');
  one('end_date');
  return out;
}

/** The preset's member fields tried on the sample: which give a value in some record. */
function tryPreset(sample: Sample, name: PresetName): { matching: PresetField[]; missing: PresetField[] } {
  const members = (PRESETS[name].fragment('https://example.invalid', {}) as { members?: { fields?: Record<string, string | string[]> } }).members;
  const matching: PresetField[] = [];
  const missing: PresetField[] = [];
  for (const [field, spec] of Object.entries(members?.fields ?? {})) {
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
export function suggestMapping(file: string, preset?: string): Suggestion {
  if (preset !== undefined && !(PRESET_NAMES as string[]).includes(preset)) {
    throw new OrgsyncError('USAGE', `sources suggest: --preset ${preset}: no such preset (presets: ${PRESET_NAMES.join(', ')})`);
  }
  const name = preset as PresetName | undefined;
  const itemsPath = name ? (PRESETS[name].fragment('https://example.invalid', {}) as { members?: { items_path?: string } }).members?.items_path : undefined;
  const sample = readSample(file, itemsPath);
  if (!name) return { sample, proposals: propose(sample, () => true) };
  const tried = tryPreset(sample, name);
  const covered = new Set(tried.matching.map((f) => f.field));
  // department and department_path fill the same need.
  if (covered.has('department_path')) covered.add('department');
  if (covered.has('department')) covered.add('department_path');
  return { sample, preset: { name, ...tried }, proposals: propose(sample, (f) => !covered.has(f)) };
}

const specText = (s: string | string[]) => (Array.isArray(s) ? s.join(' | ') : s);

/** The YAML fragment, with comments saying where the records are and, with a preset, what it already reads. */
export function renderSuggestion(s: Suggestion): string {
  const doc = new Document({ fields: {} });
  const fields = doc.get('fields') as YAMLMap;
  for (const p of s.proposals) {
    const value = doc.createNode(p.spec);
    const what = s.sample.kind === 'csv' ? (p.matched.length > 1 ? 'columns' : 'column') : p.matched.length > 1 ? 'keys' : 'key';
    value.comment = ` ${p.confidence}: ${what} ${p.matched.map((m) => JSON.stringify(m)).join(', ')}`;
    fields.set(doc.createNode(p.field), value);
  }
  const before: string[] = [`sources suggest: ${s.sample.file}`];
  if (s.sample.kind === 'json') {
    before.push(s.sample.itemsPath ? `records found under ${s.sample.itemsPath} (items_path: ${s.sample.itemsPath}); ${s.sample.records.length} looked at` : `records: the file is an array; ${s.sample.records.length} looked at`);
  } else before.push(`CSV header: ${s.sample.keys.length} columns`);
  if (s.preset) {
    const p = s.preset;
    before.push(`preset ${p.name}: ${p.matching.length > 0 ? 'its fields that find values here (kept as they are):' : 'none of its fields finds a value here'}`);
    for (const f of p.matching) before.push(`  ${f.field}: ${specText(f.spec)}${s.sample.kind === 'json' ? ` (${f.filled} of ${s.sample.records.length} records)` : ''}`);
    if (p.missing.length > 0) before.push(`preset ${p.name}: finds nothing for ${p.missing.map((f) => `${f.field} (${specText(f.spec)})`).join(', ')}`);
    before.push(s.proposals.length > 0 ? 'proposed for the rest (paste under the source\'s members:, beside preset:):' : 'nothing to propose for the rest');
  } else before.push('proposed mapping (paste under the source\'s members:):');
  doc.commentBefore = before.map((l) => ` ${l}`).join('\n');
  if (s.proposals.length === 0) return `${before.map((l) => `# ${l}`).join('\n')}\n`;
  return doc.toString({ lineWidth: 0 });
}
