/**
 * Which mapped fields found nothing (issue 45): `sources check` and `sources preview` read a source with a
 * FieldCoverage, which sees every record the mapping takes (after include/exclude) and, for each field, whether any of
 * the paths, columns or attributes it reads gave a value. A field none of whose names gave a value in any record read
 * is reported with why, per name: for a JSON field path, how far the path got in the record that got furthest (a key
 * missing, a filter matching no element, an index past the end, null). Runs leave it out: nothing is added to them.
 * Pure: it sees lookups only.
 */
import type { EntityKind } from '../domain/entities.js';
import { formatPath, parsePath, WrongType, type PathStep } from '../shared/field-path.js';
import type { Lookup } from './fields.js';

/** One field that matched nothing in the records read. */
export interface FieldGap {
  entity: EntityKind;
  field: string;
  /** Records of the entity the mapping read. */
  records: number;
  /** Each name the field reads (a path, column or placeholder) and why it gave nothing. */
  paths: { path: string; why: string }[];
}

/** Records a name is probed in (how far its path gets) before the furthest seen is taken as the answer. */
const PROBED_RECORDS = 1000;

/** What is known of one name: whether it ever gave a value, and the furthest its path got in a record. */
interface NameState {
  name: string;
  filled: boolean;
  /** The name's path steps and the text of each prefix (JSON sources); undefined for columns and attributes. */
  steps?: PathStep[];
  prefixes?: string[];
  probed: number;
  /** Steps of the path that led somewhere in the best record so far (-1: none probed), and why it stopped there. */
  depth: number;
  why: string;
}

const empty = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

/** Why a path that got `depth` steps far stopped there (the value at `depth` steps being `at`). */
function stopReason(steps: PathStep[], depth: number, at: unknown): string {
  const prefix = formatPath(steps.slice(0, depth));
  if (depth === steps.length) return at === null ? 'is null' : 'is empty';
  if (at === null) return `${prefix} is null`;
  const step = steps[depth]!;
  if (step.kind === 'key') return depth === 0 ? `no record has "${step.key}"` : `${prefix} has no "${step.key}"`;
  if (step.kind === 'index') return `${prefix} has no element ${formatPath([step])}`;
  return `no element of ${prefix} matches ${formatPath([step])}`;
}

/** Sees the records of one source's mapping; `paths`: names are JSON field paths (hris-json), probed step by step. */
export class FieldCoverage {
  private readonly records: Record<EntityKind, number> = { departments: 0, positions: 0, members: 0 };
  private readonly names = new Map<string, NameState>();
  private readonly fields: Record<EntityKind, [string, NameState[]][]>;

  constructor(fields: Record<EntityKind, [string, string[]][]>, paths: boolean) {
    const state = (name: string): NameState => {
      let s = this.names.get(name);
      if (s === undefined) {
        s = { name, filled: false, probed: 0, depth: -1, why: '' };
        if (paths) {
          try {
            s.steps = parsePath(name);
            s.prefixes = s.steps.map((_, i) => formatPath(s!.steps!.slice(0, i + 1)));
          } catch {
            // A path the config already refused; named without a probe.
          }
        }
        this.names.set(name, s);
      }
      return s;
    };
    this.fields = {
      departments: fields.departments.map(([f, ns]) => [f, ns.map(state)]),
      positions: fields.positions.map(([f, ns]) => [f, ns.map(state)]),
      members: fields.members.map(([f, ns]) => [f, ns.map(state)]),
    };
  }

  /** One record the mapping reads. */
  record(entity: EntityKind, lookup: Lookup): void {
    this.records[entity]++;
    for (const [, names] of this.fields[entity]) {
      for (const s of names) {
        if (s.filled) continue;
        const v = lookup(s.name);
        // A value of the wrong type is something: the record's quarantine (wrong_type) says what.
        if (v instanceof WrongType || !empty(v)) s.filled = true;
        else if (s.probed < PROBED_RECORDS) this.probe(s, lookup, v);
      }
    }
  }

  /** How far the name's path gets in this record; kept when further than in any record before. */
  private probe(s: NameState, lookup: Lookup, whole: unknown): void {
    s.probed++;
    if (s.steps === undefined || s.prefixes === undefined) {
      if (s.depth < 0) {
        s.depth = 0;
        s.why = 'is empty or missing';
      }
      return;
    }
    let depth = 0;
    let at: unknown;
    for (let i = s.steps.length; i >= 1; i--) {
      // A container at a prefix is a WrongType to a text lookup: it is there.
      const v = i === s.steps.length ? whole : lookup(s.prefixes[i - 1]!);
      if (v !== undefined) {
        depth = i;
        at = v;
        break;
      }
    }
    if (depth > s.depth) {
      s.depth = depth;
      s.why = stopReason(s.steps, depth, at instanceof WrongType ? {} : at);
    }
  }

  /** The fields none of whose names gave a value, per entity that read records. */
  gaps(): FieldGap[] {
    const out: FieldGap[] = [];
    for (const entity of ['departments', 'positions', 'members'] as const) {
      const records = this.records[entity];
      if (records === 0) continue;
      for (const [field, names] of this.fields[entity]) {
        if (names.some((n) => n.filled)) continue;
        out.push({ entity, field, records, paths: names.map((n) => ({ path: n.name, why: n.why })) });
      }
    }
    return out;
  }
}

/** What a gap says after its field's name: `matched nothing in the 6 records read: "path": why`. */
export function gapText(g: FieldGap): string {
  const paths = g.paths.map((p) => `"${p.path}": ${p.why || 'gave no value'}`).join('; ');
  return `matched nothing in the ${g.records === 1 ? 'record' : `${g.records} records`} read: ${paths}`;
}
