/** `orgsync mirror status` and `orgsync mirror refresh` end to end: real config file, real emulator, real state DB. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli as run } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { buildOrg, writerClient } from './org-fixture.js';
import { tempDir } from '../helpers/temp.js';

describe('orgsync mirror', () => {
  let emu: TestEmulator;
  let dir: string;
  let config: string;

  beforeEach(async () => {
    emu = await startTestEmulator(orgTestSeed());
    dir = tempDir('orgsync-cli-');
    config = join(dir, 'orgsync.yaml');
    writeFileSync(
      config,
      [
        'platform:',
        `  base_url: ${emu.url}`,
        '  api_key: ${ORGSYNC_API_KEY}',
        '  requests_per_second: 100',
        '  concurrency: 8',
        'state:',
        '  path: ./var/orgsync.db',
        'log:',
        '  level: warn',
        '',
      ].join('\n'),
    );
    const writer = writerClient(emu.url);
    await buildOrg(writer, { positions: 2, departments: 3, members: 4 });
    await writer.close();
  });
  afterEach(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refresh builds the mirror (state.path relative to the config file); status reports counts, watermarks and walks', async () => {
    const env = { ORGSYNC_API_KEY: TEST_KEYS.acmeRead };
    const first = await run(['mirror', 'refresh', '--config', config], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^positions: full walk, 1 page, 2 records \(0 tombstones\), 0 removed; watermark \d{4}-\d\d-\d\dT.*Z$/);
    expect(lines[1]).toMatch(/^departments: full walk, 1 page, 4 records/);
    expect(lines[2]).toMatch(/^members: full walk, 1 page, 5 records/);

    const second = await run(['mirror', 'refresh', '--config', config], env);
    expect(second.stdout).toMatch(/^positions: incremental walk, 1 page/m);
    const forced = await run(['mirror', 'refresh', '--config', config, '--full'], env);
    expect(forced.stdout).toMatch(/^members: full walk, 1 page, 5 records \(0 tombstones\), 0 removed/m);

    const status = await run(['mirror', 'status', '--config', config], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`state DB: ${join(dir, 'var', 'orgsync.db')}`);
    expect(status.stdout).toMatch(/^positions\s+active\s+2$/m);
    expect(status.stdout).toMatch(/^departments\s+active\s+4$/m);
    expect(status.stdout).toMatch(/^members\s+active\s+5$/m);
    expect(status.stdout).toMatch(/^members\s+\d{4}-\S+Z\s+\d{4}-\S+Z\s+\d{4}-\S+Z\s+full, completed \d{4}-\S+Z$/m);

    const json = await run(['mirror', 'status', '--config', config, '--json'], env);
    const doc = JSON.parse(json.stdout) as { counts: unknown[]; states: { entity: string; watermark: string }[] };
    expect(doc.counts).toContainEqual({ entity: 'members', status: 'active', count: 5 });
    expect(doc.states.map((s) => s.entity)).toEqual(['positions', 'departments', 'members']);
  });

  it('status of a state DB that was never refreshed says so', async () => {
    const env = { ORGSYNC_API_KEY: TEST_KEYS.acmeRead };
    const status = await run(['mirror', 'status', '--config', config], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^members\s+-\s+0$/m);
    expect(status.stdout).toMatch(/^members\s+none\s+never\s+never\s+never$/m);
  });

  it('a credential without read scope: one clear line, exit 1, mirror untouched', async () => {
    const env = { ORGSYNC_API_KEY: TEST_KEYS.acmeRead };
    await run(['mirror', 'refresh', '--config', config], env);
    const before = await run(['mirror', 'status', '--config', config, '--json'], env);
    for (const key of [TEST_KEYS.acmeWrite, TEST_KEYS.acmeNone]) {
      const res = await run(['mirror', 'refresh', '--config', config, '--full'], { ORGSYNC_API_KEY: key });
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(res.stderr).toMatch(/^orgsync: the platform credential lacks the scope tenant\.org\.read \(GET \/org\/positions: 403 scope_denied/);
      expect(res.stderr).not.toContain(key);
    }
    const after = await run(['mirror', 'status', '--config', config, '--json'], env);
    expect(after.stdout).toBe(before.stdout);
  });

  it('an invalid key is a clear error too', async () => {
    const res = await run(['mirror', 'refresh', '--config', config], { ORGSYNC_API_KEY: 'ek_nobody_0000000000' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^orgsync: the platform rejected the credential \(GET \/org\/positions: 401 invalid_api_key/);
  });

  it('config errors exit 2 with one line', async () => {
    const missingEnv = await run(['mirror', 'refresh', '--config', config], {});
    expect(missingEnv.code).toBe(2);
    expect(missingEnv.stderr).toMatch(/^orgsync: .*platform\.api_key: environment variable ORGSYNC_API_KEY is not set\n$/);
    const noFile = await run(['mirror', 'status', '--config', join(dir, 'nope.yaml')], {});
    expect(noFile.code).toBe(2);
    const noConfig = await run(['mirror', 'status'], {});
    expect(noConfig.code).toBe(2);
    const noKey = join(dir, 'no-key.yaml');
    writeFileSync(noKey, `platform:\n  base_url: ${emu.url}\nstate:\n  path: ./var/orgsync.db\n`);
    const missingKey = await run(['mirror', 'refresh', '--config', noKey], {});
    expect(missingKey.code).toBe(2);
    expect(missingKey.stderr).toBe(`orgsync: ${noKey}: platform.api_key: required (or platform.api_key_file)\n`);
    const badDuration = join(dir, 'bad-duration.yaml');
    writeFileSync(badDuration, `platform:\n  base_url: ${emu.url}\nstate:\n  full_walk_every: often\n`);
    const bad = await run(['mirror', 'status', '--config', badDuration], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/state\.full_walk_every: expected a duration/);
  });
});
