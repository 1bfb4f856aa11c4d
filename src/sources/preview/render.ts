/**
 * The two outputs of `orgsync sources preview`: a JSON document of stable shape (docs/commands.md) and the text
 * for a terminal, both built from the same PreviewRecord values. Personal data is printed: the command shows an
 * operator their own HR records, as `sources check` does.
 */
import type { DesiredMember } from '../../domain/desired.js';
import type { EntityKind } from '../../domain/entities.js';
import type { FieldRead, SourcePreviewRead } from './read-preview.js';
import { gapText, type FieldGap } from '../../desired/index.js';

/** What the planner's lifecycle rules make of a kept member on the day judged (computed by the caller). */
export interface PreviewLifecycle {
  /** left: the source says status left (issue 45: "not synced (status left)"). */
  rule: 'scheduled' | 'ended' | 'active' | 'left';
  message: string;
  /** scheduled: the day the member is created (create_days_before_start before the start). */
  create_on?: string;
}

/** One mapped field of a record: the value it got, the spec alternative it came from, and the text read there. */
export interface PreviewField {
  field: string;
  /** The value in the mapped record (normalised: e-mail lower-cased, phone E.164, status mapped); null when not kept. */
  value: string | number | null;
  /** The path, column, attribute or template that gave the value; null when the connector worked it out (an LDAP DN, a disabled account). */
  from: string | null;
  /** The text read at `from`, as the source gave it; null when worked out by the connector. */
  read: string | null;
  /** Why the value could not be read as text (a wrong JSON type). */
  problem?: string;
  /** When `from` is null: `connector` (an LDAP DN or account state), or `default` (no status mapped: active). */
  worked_out?: 'connector' | 'default';
}

/** One record of the preview. */
export interface PreviewRecord {
  location: string;
  outcome: 'kept' | 'quarantined' | 'excluded';
  raw: unknown;
  fields: PreviewField[];
  dates?: { start_date?: { text: string; at: string }; end_date?: { text: string; at: string } };
  lifecycle?: PreviewLifecycle;
  quarantine?: { reason: string; message: string };
  warnings: { code: string; message: string }[];
}

/** The JSON document of `sources preview --output json`. */
export interface PreviewDocument {
  today: string;
  entity: EntityKind;
  limit: number;
  sources: { source: string; type: string; configured: boolean; records: PreviewRecord[]; field_warnings: PreviewFieldWarning[] }[];
}

/** A mapped field that matched nothing in the records read (issue 45), per path or column with why. */
export interface PreviewFieldWarning {
  field: string;
  records: number;
  paths: { path: string; why: string }[];
  message: string;
}

/** The mapped record's key of each field. */
const RECORD_KEY: Record<string, string> = { id: 'source_id', department: 'department_source_id', department_path: 'department_source_id', parent: 'parent_source_id' };

/** Fields the mapping uses without keeping them on the record (they name derived departments and positions): their text is their value. */
const DERIVING = new Set(['department_name', 'position', 'position_name']);

/** Member values a connector may work out itself, when no field read gave them. */
const WORKED_OUT: [string, string][] = [
  ['department', 'department_source_id'],
  ['status', 'status'],
  ['end_date', 'end_date'],
];

/** The field reads of one record, one per field: the read that gave the value (for phone, the alternative that was valid). */
function fieldsOf(reads: FieldRead[], record: Record<string, unknown> | undefined, type: string): PreviewField[] {
  const byField = new Map<string, FieldRead>();
  const filled = (r: FieldRead) => typeof r.text !== 'string' || r.text.trim() !== '';
  for (const r of reads) {
    const known = byField.get(r.field);
    // Phone alternatives are tried until one is a valid number, e-mail fallbacks until one is an address: the last one
    // read gave the kept value; without one, the first value read is the one whose problem is reported.
    if (known === undefined || (filled(r) && (!filled(known) || ((r.field === 'phone' || r.field === 'email') && record?.[r.field] !== undefined)))) byField.set(r.field, r);
  }
  const out: PreviewField[] = [];
  for (const [field, r] of byField) {
    const value = record !== undefined && DERIVING.has(field) && typeof r.text === 'string' && r.text.trim() !== '' ? r.text.trim() : record?.[RECORD_KEY[field] ?? field];
    const f: PreviewField = { field, value: typeof value === 'string' || typeof value === 'number' ? value : null, from: r.from, read: typeof r.text === 'string' ? r.text : null };
    if (typeof r.text !== 'string') f.problem = r.text.problem;
    out.push(f);
  }
  if (record && 'source_id' in record && 'display_name' in record) {
    for (const [field, key] of WORKED_OUT) {
      const v = record[key];
      if ((typeof v === 'string' || typeof v === 'number') && !out.some((f) => (RECORD_KEY[f.field] ?? f.field) === key)) {
        out.push({ field, value: v, from: null, read: null, worked_out: type === 'ldap' ? 'connector' : 'default' });
      }
    }
  }
  return out;
}

/** The preview's JSON document; `lifecycle` judges a kept member on the day (the planner's rules, given by the caller). */
export function previewDocument(reads: SourcePreviewRead[], o: { today: string; limit: number; entity: EntityKind; lifecycle: (m: DesiredMember) => PreviewLifecycle }): PreviewDocument {
  const sources = reads.map((s) => ({
    source: s.source,
    type: s.type,
    configured: s.configured,
    field_warnings: fieldWarnings(s.gaps),
    records: s.records.map((r): PreviewRecord => {
      const kept = r.outcome.kind === 'kept' ? r.outcome.record : undefined;
      const rec: PreviewRecord = { location: r.location, outcome: r.outcome.kind, raw: r.raw, fields: fieldsOf(r.reads, kept, s.type), warnings: [] };
      if (r.outcome.kind === 'quarantined') rec.quarantine = { reason: r.outcome.entry.reason, message: r.outcome.entry.message };
      if (r.outcome.kind === 'kept') {
        rec.warnings = r.outcome.warnings.map((w) => ({ code: w.code, message: w.message }));
        if (s.entity === 'members') {
          const m = r.outcome.record as unknown as DesiredMember;
          const dates: NonNullable<PreviewRecord['dates']> = {};
          if (m.start_at !== undefined) dates.start_date = { text: m.start_date ?? '', at: new Date(m.start_at).toISOString() };
          if (m.end_at !== undefined) dates.end_date = { text: m.end_date ?? '', at: new Date(m.end_at).toISOString() };
          rec.dates = dates;
          rec.lifecycle = o.lifecycle(m);
        }
      }
      return rec;
    }),
  }));
  return { today: o.today, entity: o.entity, limit: o.limit, sources };
}

function fieldWarnings(gaps: readonly FieldGap[]): PreviewFieldWarning[] {
  return gaps.map((g) => ({ field: g.field, records: g.records, paths: g.paths, message: `${g.entity}.${g.field}: ${gapText(g)}` }));
}

const quoted = (s: string) => JSON.stringify(s);

function fieldLine(f: PreviewField, date: { text: string; at: string } | undefined): string {
  let shown: string;
  if (f.value !== null) {
    shown = String(f.value);
    if (date) shown += ` (${date.at})`;
    if (f.read !== null && f.read.trim() !== String(f.value)) shown += ` (read ${quoted(f.read)})`;
  } else if (f.problem !== undefined) shown = `(${f.problem})`;
  else shown = f.read === null || f.read.trim() === '' ? '(empty)' : quoted(f.read);
  const from = f.from ?? (f.worked_out === 'connector' ? '(worked out by the connector: the DN, the account state)' : '(default: no status mapped)');
  return `  ${f.field}: ${shown} ← ${from}\n`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The text for a terminal: per record its location and outcome, the raw record, one line per field, then the verdict. */
export function renderPreview(doc: PreviewDocument): string {
  let out = '';
  for (const s of doc.sources) {
    out += `sources preview: source ${s.source} (${s.type}), ${doc.entity}, the first ${plural(doc.limit, 'record')}, dates judged on ${doc.today}\n`;
    if (!s.configured) {
      out += `  (source ${s.source} has no ${doc.entity}: nothing read)\n`;
      continue;
    }
    for (const r of s.records) {
      out += `${r.location}: ${r.outcome === 'excluded' ? 'out of scope (left out by include/exclude)' : r.outcome}\n`;
      out += `  raw: ${JSON.stringify(r.raw)}\n`;
      for (const f of r.fields) out += fieldLine(f, f.field === 'start_date' || f.field === 'end_date' ? r.dates?.[f.field] : undefined);
      // A leaver's message says what it is ("not synced (status left): ..."); the other rules are named first.
      if (r.lifecycle) out += `  lifecycle: ${r.lifecycle.rule === 'left' ? '' : `${r.lifecycle.rule}: `}${r.lifecycle.message}\n`;
      if (r.quarantine) out += `  quarantined: ${r.quarantine.reason}: ${r.quarantine.message}\n`;
      for (const w of r.warnings) out += `  warning: ${w.code}: ${w.message}\n`;
    }
    for (const w of s.field_warnings) out += `warning: ${w.message}\n`;
    const count = (k: PreviewRecord['outcome']) => s.records.filter((r) => r.outcome === k).length;
    out += `source ${s.source}: ${plural(s.records.length, 'record')} read: ${count('kept')} kept, ${count('quarantined')} quarantined, ${count('excluded')} out of scope\n`;
  }
  out += 'nothing was written (no state DB, no platform call)\n';
  return out;
}
