/**
 * Issue 21 point 2, end to end: the local clock jumps an hour ahead and back while the platform (the emulator,
 * on its own clock: the host's) keeps its time. Every platform change made meanwhile must be seen by the next
 * incremental run, because the mirror's watermarks are the platform's time, never the local clock.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunEnvironment, type RunEnvironment } from '../../src/app/run-environment.js';
import { loadConfig } from '../../src/config/load.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { DEMO_KEY, demoSeed } from '../daemon/support.js';
import { JumpClock } from './jump-clock.js';
import { tempDir } from '../helpers/temp.js';

const HOUR = 3_600_000;

describe('clock jumps: the mirror never misses a platform change', { timeout: 120_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let env: RunEnvironment;
  const clock = new JumpClock();
  /** The platform's clock: the host's, except in the last test, where it runs an hour behind. */
  const platformClock = new JumpClock();
  const sink = new Writable({ write: (_c, _e, cb) => cb() });

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed(), { clock: platformClock });
    dir = tempDir('orgsync-clock-');
    writeFileSync(join(dir, 'departments.csv'), 'dept_id,name,parent_id\nENG,Engineering,\n');
    writeFileSync(join(dir, 'members.csv'), 'employee_id,name,email,dept_id\nE1,Ada Lovelace,ada@demo-corp.test,ENG\nE2,Alan Turing,alan@demo-corp.test,ENG\n');
    writeFileSync(
      join(dir, 'orgsync.yaml'),
      `platform:
  base_url: ${emulator.url}
  api_key: ${DEMO_KEY}
state:
  path: ./state/orgsync.db
  mirror_overlap_seconds: 120
sync:
  id: clock-jumps
sources:
  - name: hr
    type: csv
    departments: { file: departments.csv, fields: { id: dept_id, name: name } }
    members: { file: members.csv, fields: { id: employee_id, display_name: name, email: email, department: dept_id } }
log:
  level: warn
  format: json
`,
    );
    env = openRunEnvironment(loadConfig(join(dir, 'orgsync.yaml'), {}), { env: {} }, { logDestination: sink, logIsTTY: false, clock });
  });

  afterAll(async () => {
    await env?.close();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = async () => {
    const summary = await env.run({ mode: 'apply' }, {});
    expect(summary.exitCode).toBe(0);
    return summary;
  };
  /** A change made on the platform behind orgsync's back (records it does not own, so it leaves them alone). */
  const platformChange = async (label: string) => {
    const created = await emulator.request('POST', '/api/external/v1/org/members', {
      token: DEMO_KEY,
      body: { display_name: `Walk-in ${label}`, email: `walkin-${label}@demo-corp.test` },
    });
    expect(created.status).toBeLessThan(300);
    const id = (created.body.data ?? created.body).account_id as string;
    return id;
  };
  const mirrored = (id: string) => env.mirror.get('members', id)?.display_name;
  const states = () => Object.fromEntries(env.mirror.states().map((s) => [s.entity, s]));

  it('+1 h: the watermark stays at platform time, and changes made then are seen by the next runs', async () => {
    const first = await run();
    expect(first.plan.changes.length).toBeGreaterThan(0);
    const platformNow = Date.now();

    clock.jump(HOUR);
    const during = await platformChange('ahead');
    await run();
    expect(mirrored(during)).toBe('Walk-in ahead');
    // Never ahead of what the platform showed: the watermark is the platform's time, an hour behind this clock.
    for (const s of Object.values(states())) {
      expect(Date.parse(s.watermark!)).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(Date.parse(s.watermark!)).toBeGreaterThanOrEqual(platformNow - 2_000);
      expect(Date.parse(s.lastIncrementalAt ?? s.lastFullWalkAt!)).toBeGreaterThan(Date.now() + HOUR - 60_000);
    }
    const afterAhead = await platformChange('after-ahead');

    clock.jump(-HOUR);
    const back = await platformChange('back');
    const lastFull = states().members!.lastFullWalkAt;
    await run();
    // An incremental run (the clock is not behind the last full walk: no new full walk), and it saw both changes.
    expect(states().members!.lastFullWalkAt).toBe(lastFull);
    expect(mirrored(afterAhead)).toBe('Walk-in after-ahead');
    expect(mirrored(back)).toBe('Walk-in back');

    // And back further still, behind the last full walk: a full walk, which sees everything too.
    clock.jump(-HOUR);
    const behind = await platformChange('behind');
    await run();
    expect(states().members!.lastFullWalkAt).not.toBe(lastFull);
    expect(mirrored(behind)).toBe('Walk-in behind');
    clock.reset();
  });

  it('the platform\'s own clock stepped back an hour: the next run takes a full walk and sees every change; then incremental again', async () => {
    await run();
    const lastFull = states().members!.lastFullWalkAt;
    platformClock.jump(-HOUR);
    const behind = await platformChange('platform-behind');
    await run();
    // Its updated_at is an hour before the watermark: an incremental walk could not see it, a full walk does.
    expect(states().members!.lastFullWalkAt).not.toBe(lastFull);
    expect(mirrored(behind)).toBe('Walk-in platform-behind');
    // The watermark follows the platform: an hour behind this host.
    expect(Date.parse(states().members!.watermark!)).toBeLessThan(Date.now() - HOUR + 60_000);
    const fullAgain = states().members!.lastFullWalkAt;
    const next = await platformChange('platform-behind-2');
    await run();
    expect(states().members!.lastFullWalkAt).toBe(fullAgain);
    expect(mirrored(next)).toBe('Walk-in platform-behind-2');
    platformClock.reset();
  });
});
