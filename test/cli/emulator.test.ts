/**
 * The `orgsync emulator` command as a user runs it: node dist/cli.js, which loads the emulator package's dist (both
 * built first, by the root build, when missing or older than their sources).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { CLI, ensureBuilt, repoRoot as ROOT } from '../helpers/build.js';
import { tempDir } from '../helpers/temp.js';

const KEY = 'ek_acme_0123456789abcdef';

/** The JSON body of a response (test data, loosely typed). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (res: Response): Promise<any> => res.json();

beforeAll(() => ensureBuilt(), 120_000);

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

function startCli(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'emulator', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^orgsync emulator listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
      if (match) resolve({ child, url: match[1]!, stdout: () => out, exited });
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    void exited.then((code) => reject(new Error(`emulator exited ${code}: ${err}`)));
  });
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill('SIGTERM');
  return s.exited;
}

describe('orgsync emulator (CLI)', () => {
  test('prints exactly one ready line with the real port, serves the seed, and stops cleanly on SIGTERM', async () => {
    const s = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml']);
    const res = await fetch(`${s.url}/api/external/v1/org/departments`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    expect((await json(res)).items[0]).toMatchObject({ name: 'Acme', depth: 0 });
    expect(s.stdout()).toMatch(/^orgsync emulator listening on http:\/\/127\.0\.0\.1:[1-9]\d*\n$/);
    expect(await stop(s)).toBe(0);
    expect(s.stdout().split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('without --admin-token the admin routes are 404; with it they answer', async () => {
    const plain = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml']);
    expect((await fetch(`${plain.url}/_emulator/requests`, { headers: { authorization: 'Bearer T' } })).status).toBe(404);
    await stop(plain);
    const admin = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml', '--admin-token', 'T']);
    expect((await fetch(`${admin.url}/_emulator/requests`, { headers: { authorization: 'Bearer T' } })).status).toBe(200);
    await stop(admin);
  });

  test('--db keeps data across a restart, and seeding again duplicates nothing', async () => {
    const dir = tempDir('orgsync-emu-');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, 'emu.db');
    const first = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml', '--db', db]);
    const created = await fetch(`${first.url}/api/external/v1/org/departments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Engineering', third_department_id: 'ENG' }),
    });
    expect(created.status).toBe(201);
    const id = (await json(created)).id;
    expect(await stop(first)).toBe(0);

    const second = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml', '--db', db]);
    const headers = { authorization: `Bearer ${KEY}` };
    const depts = await json(await fetch(`${second.url}/api/external/v1/org/departments`, { headers }));
    expect(depts.items.map((d: { name: string }) => d.name)).toEqual(['Acme', 'Engineering']);
    expect(depts.items[1].id).toBe(id);
    const members = await json(await fetch(`${second.url}/api/external/v1/org/members`, { headers }));
    expect(members.items).toHaveLength(1);
    // New records after the restart still sort after the old ones.
    await fetch(`${second.url}/api/external/v1/org/departments`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Later' }),
    });
    const inc = await json(await fetch(`${second.url}/api/external/v1/org/departments?updated_since=2000-01-01T00:00:00Z`, { headers }));
    expect(inc.items.at(-1).name).toBe('Later');
    expect(await stop(second)).toBe(0);
  });

  test('a bad seed exits 2 with one line naming the file and the path', () => {
    const dir = tempDir('orgsync-emu-');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const seed = join(dir, 'seed.yaml');
    writeFileSync(seed, 'tenants:\n  - id: 1\n    name: A\n    api_keys:\n      - key: ek_a_1\n      - key: nope\n');
    const r = spawnSync(process.execPath, [CLI, 'emulator', '--port', '0', '--seed', seed], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`orgsync: ${seed}: tenants[0].api_keys[1].key: an API key has the form ek_<prefix>_<secret>\n`);
  });

  test('a port in use exits 2 with one line', async () => {
    const first = await startCli(['--port', '0', '--seed', 'config/seed.example.yaml']);
    const port = new URL(first.url).port;
    const r = spawnSync(process.execPath, [CLI, 'emulator', '--port', port, '--seed', 'config/seed.example.yaml'], { cwd: ROOT, encoding: 'utf8' });
    await stop(first);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`orgsync: cannot listen on 127.0.0.1 (--port ${port}): EADDRINUSE\n`);
  });

  test('--help shows an example', () => {
    const r = spawnSync(process.execPath, [CLI, 'emulator', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('  $ orgsync emulator --port 8080 --seed config/demo/seed.yaml   # runs until Ctrl-C (then exit 0)');
  });
});
