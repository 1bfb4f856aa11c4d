/** Test helpers: a config with just `sources:`, read with the real connectors. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { sourcesConfigSchema } from '../../src/config/sources.js';
import { expandPresets } from '../../src/config/presets/index.js';
import type { Config } from '../../src/config/schema.js';
import { readDesiredState } from '../../src/sources/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { Clock } from '../../src/shared/clock.js';
import type { DesiredState, SourceMember } from '../../src/domain/desired.js';
import type { SourceBatch } from '../../src/desired/index.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/sources/', import.meta.url));
/** Small copies of public data (origins and licences in test/fixtures/README.md). */
export const PUBLIC_DATA = fileURLToPath(new URL('../fixtures/public/', import.meta.url));

/** A clock whose sleeps end at once (retries in tests do not wait). */
export const instantClock: Clock = { now: () => Date.UTC(2026, 0, 1), sleep: async () => {} };

/** The parts of a Config that readDesiredState reads. */
export function sourcesConfig(sources: unknown[], dir = FIXTURES): Pick<Config, 'sources' | 'meta'> {
  return { sources: sourcesConfigSchema.parse(expandPresets(sources)), meta: { file: join(dir, 'orgsync.yaml'), dir, secrets: [] } };
}

/** Reads the given sources with the real connectors. */
export function read(sources: unknown[], dir = FIXTURES, env: Record<string, string | undefined> = {}): Promise<DesiredState> {
  return readDesiredState(sourcesConfig(sources, dir), { env, logger: silentLogger, clock: instantClock });
}

/** Reason and location of each quarantine entry, for exact assertions. */
export function reasons(state: DesiredState): { reason: string; source_id: string | undefined; location: string }[] {
  return state.quarantine.map((q) => ({ reason: q.reason, source_id: q.source_id, location: q.location }));
}

/** The issue-4 CSV source, with paths under `dir`. */
export function csvSource(over: Record<string, unknown> = {}, members = 'good/members.csv', departments = 'good/departments.csv'): Record<string, unknown> {
  return {
    name: 'hr',
    type: 'csv',
    phone_region: 'US',
    departments: { file: departments, fields: { id: 'dept_id', name: 'name', parent: 'parent_id' } },
    positions: { file: 'good/positions.csv', fields: { id: 'pos_id', name: 'name' } },
    members: {
      file: members,
      fields: { id: 'employee_id', display_name: '{first_name} {last_name}', email: 'email', phone: 'phone', title: 'title', department: 'dept_id', status: 'status' },
      status_map: { active: 'active', leave: 'suspended', terminated: 'left' },
    },
    ...over,
  };
}

/** One source's members, as its read staged them, in order. */
export function membersOf(batch: SourceBatch): SourceMember[] {
  const out: SourceMember[] = [];
  for (const window of batch.stage.windows()) for (const s of window) if (s.rank === batch.rank) out.push(s.member);
  return out;
}

/** A batch as a plain value (its staged members in place of the stage), for comparing two reads. */
export function plainBatch(batch: SourceBatch): Omit<SourceBatch, 'stage'> & { members: SourceMember[] } {
  const { stage: _stage, ...rest } = batch;
  return { ...rest, members: membersOf(batch) };
}
