/**
 * How a delta-capable source is read this run, as a decision table: the first rule that applies decides a full read
 * and says why; when none applies the source is read by delta (changes since the snapshot's watermark).
 *
 * | rule                 | when                                                   | reason                           |
 * |----------------------|--------------------------------------------------------|----------------------------------|
 * | `first read`         | no snapshot of the source in the state DB              | `first read`                     |
 * | `config changed`     | the hash of the source's config and mapping differs    | `config changed`                 |
 * | `full_read_interval` | the last full read is `full_read_interval` or older    | `full_read_interval 24h elapsed` |
 * | `--full-read`        | `sync --full-read`                                     | `--full-read`                    |
 * | (none)               | otherwise                                              | `changes since <watermark time>` |
 */
import type { ReadMode } from './types.js';

/** What the decision looks at. */
export interface ReadModeFacts {
  /** The snapshot's head in the state DB; undefined: never read (or its snapshot was dropped). */
  head: { configHash: string; fullReadAt: number; readAt: number } | undefined;
  /** The hash of the source's config and mapping now (config-hash.ts). */
  configHash: string;
  /** The clock's ms now. */
  now: number;
  /** The source's `full_read_interval` in ms. */
  fullReadIntervalMs: number;
  /** `sync --full-read`. */
  fullRead: boolean;
}

/** The mode and why. */
export interface ReadModeDecision {
  mode: ReadMode;
  reason: string;
}

/** One rule of the table: the reason for a full read, or undefined when it does not apply. */
export interface ReadModeRule {
  name: string;
  fullReadBecause(f: ReadModeFacts): string | undefined;
}

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** A duration in ms as the config writes it (`24h`, `90m`, `1500ms`): the largest unit that divides it. */
export function formatDuration(ms: number): string {
  // Whole days read better as hours up to a week (the default is written 24h).
  for (const [size, unit] of UNITS) if (ms % size === 0 && !(unit === 'd' && ms < 7 * 86_400_000)) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The rules, in the order they are tried. */
export const READ_MODE_RULES: readonly ReadModeRule[] = [
  { name: 'first read', fullReadBecause: (f) => (f.head === undefined ? 'first read' : undefined) },
  { name: 'config changed', fullReadBecause: (f) => (f.head !== undefined && f.head.configHash !== f.configHash ? 'config changed' : undefined) },
  {
    name: 'full_read_interval',
    fullReadBecause: (f) => (f.head !== undefined && f.now - f.head.fullReadAt >= f.fullReadIntervalMs ? `full_read_interval ${formatDuration(f.fullReadIntervalMs)} elapsed` : undefined),
  },
  { name: '--full-read', fullReadBecause: (f) => (f.fullRead ? '--full-read' : undefined) },
];

/** Decides how to read a delta-capable source (see the table above). */
export function decideReadMode(facts: ReadModeFacts): ReadModeDecision {
  for (const rule of READ_MODE_RULES) {
    const reason = rule.fullReadBecause(facts);
    if (reason !== undefined) return { mode: 'full', reason };
  }
  return { mode: 'delta', reason: `changes since the read of ${new Date(facts.head!.readAt).toISOString()}` };
}
