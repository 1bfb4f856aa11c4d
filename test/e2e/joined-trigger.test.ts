/**
 * Issue 22: triggers queued behind a running run join into one run. A caller's selector that matches nothing must not
 * cost the other callers their records: the joined run applies what matched and reports the rest in
 * `summary.unmatched`; it fails (exit 2) only when nothing matched. A single caller's unmatched selector still fails.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactSummary } from '../../src/daemon/daemon.js';
import { isOrgsyncError } from '../../src/shared/errors.js';
import { org, SyncWorld } from './harness.js';

const BEFORE = org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] });
const AFTER = org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng'], ['u2', 'Bob New', 'bob@acme.test', 'eng']] });

describe('a joined trigger run (several callers\' --only selectors)', () => {
  let world: SyncWorld;
  beforeEach(async () => {
    world = await SyncWorld.start();
    expect((await world.run(BEFORE)).exitCode).toBe(0);
  });
  afterEach(async () => {
    await world.close();
  });

  it('applies the records that matched and reports the selector that matched nothing', async () => {
    const summary = await world.run(AFTER, { only: ['bob@acme.test', 'typo@acme.test'], onlyJoined: true });
    expect(summary.exitCode).toBe(0);
    expect(summary.unmatched).toEqual(['typo@acme.test']);
    // What GET /runs/<id> shows of it: a count, never the selector (issue 44).
    expect(compactSummary(summary)).toMatchObject({ result: 'applied', writes: 1, unmatched: 1 });
    expect(JSON.stringify(compactSummary(summary))).not.toContain('typo');
    expect(summary.selection?.map((s) => [s.thirdId, s.done])).toEqual([['u2', ['create applied']]]);
    const members = await world.list<{ third_user_id: string; status: string }>('members');
    expect(members.filter((m) => m.third_user_id === 'u2').map((m) => m.status)).toEqual(['active']);
  });

  it('fails with exit 2 when no selector matched, and a single caller\'s unmatched selector still fails the run', async () => {
    const none = await world.run(AFTER, { only: ['typo@acme.test', 'nobody@acme.test'], onlyJoined: true }).catch((err: unknown) => err);
    expect(isOrgsyncError(none) && none.exitCode).toBe(2);
    expect((none as Error).message).toBe('--only "typo@acme.test", "nobody@acme.test" matched no record: not a source id, e-mail or department path in the sources or on the platform (check the id with `orgsync explain`)');
    const single = await world.run(AFTER, { only: ['bob@acme.test', 'typo@acme.test'] }).catch((err: unknown) => err);
    expect(isOrgsyncError(single) && single.exitCode).toBe(2);
    const members = await world.list<{ third_user_id: string }>('members');
    expect(members.some((m) => m.third_user_id === 'u2')).toBe(false);
  });
});
