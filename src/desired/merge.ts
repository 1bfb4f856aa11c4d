/**
 * Merges the batches of several sources per entity by source id. For each field the first source in config order
 * that has a value wins, unless a later source is authoritative for that field (`authoritative_fields`).
 * An id quarantined in any source is quarantined in the merge too: a partial picture of a record is never synced.
 */
import type { QuarantineEntry, RecordOrigin } from '../domain/desired.js';
import type { EntityKind } from '../domain/entities.js';
import type { SourceBatch } from './mapping.js';

type AnyRecord = { source_id: string; origin?: RecordOrigin } & Record<string, unknown>;

interface Slot {
  record: AnyRecord;
  /** field -> [source, authoritative?] */
  from: Map<string, [string, boolean]>;
  sources: number;
}

/** The merged records of one entity plus the entries for records dropped because another source quarantined them. */
export interface MergedEntity<T> {
  records: T[];
  quarantine: QuarantineEntry[];
}

const isEmpty = (v: unknown) => v === undefined || v === '';

/** Merges one entity across batches (given in config order). */
export function mergeEntity<T extends { source_id: string; origin?: RecordOrigin }>(entity: EntityKind, batches: SourceBatch[], pick: (b: SourceBatch) => T[]): MergedEntity<T> {
  const quarantinedIn = new Map<string, string>();
  for (const b of batches) for (const q of b.quarantine) if (q.entity === entity && q.source_id !== undefined && !quarantinedIn.has(q.source_id)) quarantinedIn.set(q.source_id, b.source);

  const quarantine: QuarantineEntry[] = [];
  if (batches.length === 1) {
    // One source: nothing to merge; only drop what the source itself quarantined (duplicate ids are gone already).
    const records = pick(batches[0]!);
    return { records: quarantinedIn.size === 0 ? records : records.filter((r) => !quarantinedIn.has(r.source_id)), quarantine };
  }
  const slots = new Map<string, Slot>();
  for (const b of batches) {
    const auth = new Set(b.authoritative.filter((f) => f.startsWith(`${entity}.`)).map((f) => f.slice(entity.length + 1)));
    for (const raw of pick(b)) {
      const rec = raw as unknown as AnyRecord;
      const badIn = quarantinedIn.get(rec.source_id);
      if (badIn !== undefined) {
        if (badIn !== b.source) {
          quarantine.push({ source: b.source, entity, source_id: rec.source_id, location: rec.origin?.location ?? '', reason: 'quarantined_in_other_source', message: `the same record is quarantined in source "${badIn}"` });
        }
        continue;
      }
      const slot = slots.get(rec.source_id);
      if (!slot) {
        const s: Slot = { record: { ...rec }, from: new Map(), sources: 1 };
        for (const [k, v] of Object.entries(rec)) if (k !== 'origin' && !isEmpty(v)) s.from.set(k, [b.source, auth.has(k)]);
        slots.set(rec.source_id, s);
        continue;
      }
      slot.sources++;
      for (const [k, v] of Object.entries(rec)) {
        if (k === 'origin' || k === 'source_id' || isEmpty(v)) continue;
        const cur = slot.from.get(k);
        if (isEmpty(slot.record[k]) || (auth.has(k) && !cur?.[1])) {
          slot.record[k] = v;
          slot.from.set(k, [b.source, auth.has(k)]);
        }
      }
    }
  }
  const records: T[] = [];
  for (const slot of slots.values()) {
    if (slot.sources > 1 && slot.record.origin) {
      slot.record.origin = { ...slot.record.origin, fieldSources: Object.fromEntries([...slot.from].filter(([k]) => k !== 'source_id').map(([k, [s]]) => [k, s])) };
    }
    records.push(slot.record as unknown as T);
  }
  return { records, quarantine };
}
