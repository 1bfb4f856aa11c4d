/**
 * Source completeness and the config scope guard through the CLI against the emulator:
 * an HRIS JSON source (a small local HTTP server) failing on its third page plans nothing and removes nothing;
 * a config that drops a source needs `sync --accept-scope-change`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN } from '../e2e/harness.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { writeStaffCsv } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-trust-guards-');
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

async function liveMembers(): Promise<string[]> {
  const items = (await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[];
  return items.map((m) => m.third_user_id).filter(Boolean).sort();
}

const header = (): string => `platform:
  base_url: ${emulator.url}
  api_key: ${TEST_KEYS.acmeRw}
  requests_per_second: 2000
state:
  path: ./state.db
log:
  level: info
`;

describe('source completeness', () => {
  let server: Server;
  let failPage: number | undefined;
  const people = Array.from({ length: 7 }, (_, i) => ({ id: `e${i}`, first: `First${i}`, last: `Last${i}`, email: `e${i}@acme.test` }));

  beforeEach(async () => {
    failPage = undefined;
    server = createServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      if (page === failPage) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"maintenance"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: people.slice((page - 1) * 2, page * 2) }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterEach(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('a source failing on its third page plans nothing and removes nothing (exit 1, no write)', async () => {
    const port = (server.address() as AddressInfo).port;
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(
      config,
      `${header()}sync:
  id: hr-sync
sources:
  - name: hris
    type: hris-json
    max_attempts: 1
    members:
      url: http://127.0.0.1:${port}/employees
      items_path: data
      pagination: { type: page, page_param: page, size: 2 }
      fields: { id: id, display_name: "{first} {last}", email: email }
`,
    );
    const first = await cli('sync', '--config', config);
    expect(first.code).toBe(0);
    expect(await liveMembers()).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);

    failPage = 3;
    const before = await writeCalls(emulator);
    const planned = await cli('plan', '--config', config, '--output', 'json');
    expect(planned.code).toBe(1);
    expect(planned.stdout).toBe('');
    expect(planned.stderr).toMatch(/^orgsync: .*hris.*members: GET .*page=3 answered HTTP 503/m);
    const synced = await cli('sync', '--config', config);
    expect(synced.code).toBe(1);
    expect(synced.stderr).toMatch(/answered HTTP 503/);
    expect(await writeCalls(emulator)).toBe(before);
    expect(await liveMembers()).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);

    // The failed read did not become the "last good snapshot": once the source answers again all is in sync.
    failPage = undefined;
    const healed = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(healed.code).toBe(0);
  });
});

describe('config scope guard', () => {
  const writeMembers = (name: string, rows: string[][]): void => void writeStaffCsv(join(dir, name), rows);
  const source = (name: string, file: string): string => `  - name: ${name}
    type: csv
    members: { file: ${file}, fields: { id: id, display_name: name, email: email } }
`;
  const writeConfig = (sources: string[]): string => {
    const file = join(dir, 'orgsync.yaml');
    writeFileSync(file, `${header()}sync:\n  id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\nsources:\n${sources.join('')}`);
    return file;
  };

  beforeEach(() => {
    writeMembers('staff.csv', [
      ['s1', 'Sam One', 's1@acme.test'],
      ['s2', 'Sue Two', 's2@acme.test'],
      ['s3', 'Sid Three', 's3@acme.test'],
      ['s4', 'Sal Four', 's4@acme.test'],
    ]);
    writeMembers('contractors.csv', [['c1', 'Cat One', 'c1@acme.test']]);
  });

  it('a config change that drops a source stops the run (exit 3, nothing written) until --accept-scope-change', async () => {
    const both = writeConfig([source('staff', 'staff.csv'), source('contractors', 'contractors.csv')]);
    expect((await cli('sync', '--config', both)).code).toBe(0);
    expect(await liveMembers()).toEqual(['c1', 's1', 's2', 's3', 's4']);

    const staffOnly = writeConfig([source('staff', 'staff.csv')]);
    const planned = await cli('plan', '--config', staffOnly);
    expect(planned.code).toBe(3);
    expect(planned.stdout).toContain('REFUSED by scope_change');
    expect(planned.stdout).toContain('source contractors removed');
    const before = await writeCalls(emulator);
    const refused = await cli('sync', '--config', staffOnly);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^orgsync: the config's scope changed since the last accepted run \(source contractors removed\) and the plan would remove 1 record\(s\)/m);
    expect(await writeCalls(emulator)).toBe(before);
    expect(await liveMembers()).toEqual(['c1', 's1', 's2', 's3', 's4']);

    const accepted = await cli('sync', '--config', staffOnly, '--accept-scope-change');
    expect(accepted.code).toBe(0);
    expect(await liveMembers()).toEqual(['s1', 's2', 's3', 's4']);
    // The new scope is now the accepted one.
    expect((await cli('plan', '--config', staffOnly, '--detailed-exitcode')).code).toBe(0);
  });

  it('a scope change that removes nothing (a source added) passes', async () => {
    const staffOnly = writeConfig([source('staff', 'staff.csv')]);
    expect((await cli('sync', '--config', staffOnly)).code).toBe(0);
    const both = writeConfig([source('staff', 'staff.csv'), source('contractors', 'contractors.csv')]);
    expect((await cli('sync', '--config', both)).code).toBe(0);
    expect(await liveMembers()).toEqual(['c1', 's1', 's2', 's3', 's4']);
  });
});

describe('shrink guard through the CLI', () => {
  it('a 30% smaller CSV export: plan and sync exit 3 with the reason, nothing written; --allow-source-shrink applies it', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => [`m${i}`, `Member ${i}`, `m${i}@acme.test`]);
    const write = (n: number): void => void writeStaffCsv(join(dir, 'staff.csv'), rows.slice(0, n));
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(
      config,
      `${header()}sync:\n  id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\nsources:\n  - name: staff\n    type: csv\n    members: { file: staff.csv, fields: { id: id, display_name: name, email: email } }\n`,
    );
    write(10);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    write(7);
    const before = await writeCalls(emulator);
    const planned = await cli('plan', '--config', config, '--output', 'json');
    expect(planned.code).toBe(3);
    const doc = JSON.parse(planned.stdout);
    expect(doc.refusal.guard).toBe('source_shrink');
    expect(doc.summary.members.remove).toBe(0);
    expect(doc.withheld.map((w: { third_id: string }) => w.third_id).sort()).toEqual(['m7', 'm8', 'm9']);
    const refused = await cli('sync', '--config', config);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain('REFUSED by source_shrink');
    expect(refused.stderr).toMatch(/^orgsync: the sources shrank against the last good read: members 10 -> 7 \(-30%\), more than sync\.max_source_shrink_percent 10/m);
    expect(await writeCalls(emulator)).toBe(before);
    const accepted = await cli('sync', '--config', config, '--allow-source-shrink');
    expect(accepted.code).toBe(0);
    expect(await liveMembers()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });
});

describe('grace period through the CLI', () => {
  it('with removal_grace { runs: 2 }: a member gone from the export stays one run (exit 0, in sync for --detailed-exitcode), then goes', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => [`g${i}`, `Grace ${i}`, `g${i}@acme.test`]);
    const write = (n: number): void => void writeStaffCsv(join(dir, 'staff.csv'), rows.slice(0, n));
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(
      config,
      `${header()}sync:\n  id: hr-sync\n  removal_grace: { runs: 2 }\nsources:\n  - name: staff\n    type: csv\n    members: { file: staff.csv, fields: { id: id, display_name: name, email: email } }\n`,
    );
    write(5);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    write(4);
    const planned = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(planned.code).toBe(0);
    expect(planned.stdout).toMatch(/withheld \(1\)\n {2}\. members remove g4: .*grace: missing from the sources in 1 of 2 consecutive runs; removed on run 2/);
    const first = await cli('sync', '--config', config);
    expect(first.code).toBe(0);
    expect(await liveMembers()).toContain('g4');
    const second = await cli('sync', '--config', config);
    expect(second.code).toBe(0);
    expect(await liveMembers()).toEqual(['g0', 'g1', 'g2', 'g3']);
  });
});
