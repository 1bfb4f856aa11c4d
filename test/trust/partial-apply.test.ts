/** Partial apply by dependency: a department create that fails for good skips only its subtree and its members. */
import { afterEach, expect, it } from 'vitest';
import { org } from '../e2e/harness.js';
import { TrustWorld } from './harness.js';

let t: TrustWorld | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it('a failed department create skips its subtree and members; everything else is applied; the next run picks it up', async () => {
  t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }');
  const start = org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] });
  expect((await t.run(start)).exitCode).toBe(0);

  const grown = (badName: string) =>
    org({
      departments: [
        ['eng', 'Engineering'],
        ['bad', badName],
        ['bad-child', 'Child', 'bad'],
        ['good', 'Good'],
        ['good-child', 'Good Child', 'good'],
      ],
      members: [
        ['u1', 'Ann Lee-Smith', 'ann@acme.test', 'eng'],
        ['u2', 'Bob In Bad', 'bob@acme.test', 'bad'],
        ['u3', 'Cid In Child', 'cid@acme.test', 'bad-child'],
        ['u4', 'Dee In Good', 'dee@acme.test', 'good-child'],
        ['u5', 'Eve In Eng', 'eve@acme.test', 'eng'],
      ],
    });
  // The emulator rejects an empty department name with 400 invalid_argument: a failure for good, not retried.
  const r = await t.run(grown(''));
  expect(r.exitCode).toBe(4);
  expect(r.result).toBe('partial');
  const byId = Object.fromEntries(r.failures.map((f) => [f.id, f.status]));
  expect(byId).toEqual({
    'departments:create:bad': 'failed',
    'departments:create:bad-child': 'skipped',
    'members:create:u2': 'skipped',
    'members:create:u3': 'skipped',
  });
  expect(r.failures.find((f) => f.id === 'members:create:u3')?.message).toBe('depends on departments:create:bad, which did not succeed');
  expect(r.applied.departments.create).toBe(2);
  expect(r.applied.members).toMatchObject({ create: 2, update: 1 });
  const view = await t.world.view();
  expect(Object.keys(view.departments).sort()).toEqual(['/Acme/Engineering', '/Acme/Good', '/Acme/Good/Good Child']);
  expect(view.members.u1?.name).toBe('Ann Lee-Smith');
  expect(view.members.u4?.department).toBe('/Acme/Good/Good Child');
  expect(view.members.u5?.department).toBe('/Acme/Engineering');
  expect(view.members.u2).toBeUndefined();

  const next = await t.run(grown('Bad'));
  expect(next.exitCode).toBe(0);
  expect(next.plan.changes.map((c) => c.id).sort()).toEqual(['departments:create:bad', 'departments:create:bad-child', 'members:create:u2', 'members:create:u3']);
  const healed = await t.world.view();
  expect(healed.members.u3?.department).toBe('/Acme/Bad/Child');
});
