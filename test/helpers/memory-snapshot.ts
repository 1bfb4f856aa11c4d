/**
 * The run's snapshot store in memory, for the LDAP delta tests and bench: a Map-backed DeltaReadContext whose
 * `commit` applies what a read left as the run's store does (a full read or a fallback replaces the snapshot, a delta
 * read applies its puts and removes), with the last watermark given. Raw records are kept as JSON would keep them.
 */
import type { EntityKind } from '../../src/domain/entities.js';
import type { DeltaReadContext, ReadMode, SnapshotRecord } from '../../src/sources/delta/types.js';

/** The snapshot store of a run, in memory: what a commit of the writer's changes leaves. */
export class MemorySnapshot {
  readonly records = new Map<EntityKind, Map<string, unknown>>();
  watermark: string | undefined;

  /** A DeltaReadContext on this snapshot, and `commit` to apply what the read left (as the run does after a read). */
  context(mode: ReadMode, reason: string, watermark = this.watermark) {
    const puts: [EntityKind, SnapshotRecord][] = [];
    const removes: [EntityKind, string][] = [];
    const marks: string[] = [];
    const fallbacks: string[] = [];
    const ctx: DeltaReadContext = {
      mode,
      reason,
      watermark,
      snapshot: (entity) => Array.from(this.records.get(entity) ?? new Map<string, unknown>()).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, raw]) => ({ key, raw })),
      writer: {
        watermark: (value) => marks.push(value),
        put: (entity, record) => puts.push([entity, record]),
        remove: (entity, key) => removes.push([entity, key]),
        fellBackToFull: (why) => {
          fallbacks.push(why);
          puts.length = 0;
          removes.length = 0;
        },
      },
    };
    const commit = () => {
      if (mode === 'full' || fallbacks.length > 0) this.records.clear();
      for (const [entity, r] of puts) {
        if (!this.records.has(entity)) this.records.set(entity, new Map());
        this.records.get(entity)!.set(r.key, JSON.parse(JSON.stringify(r.raw)));
      }
      for (const [entity, key] of removes) this.records.get(entity)?.delete(key);
      this.watermark = marks.at(-1);
    };
    return { ctx, commit, puts, removes, marks, fallbacks };
  }
}
