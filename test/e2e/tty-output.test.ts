/**
 * A sync on a terminal (a pseudo-terminal through `script -qefc`): applied changes are debug lines (none at info),
 * one short line each at debug; the progress line is cleared and redrawn around log lines, never glued to one; the
 * summary comes last; the line count does not grow with the number of changes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { CLI, ensureBuilt } from '../helpers/build.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
let emulator: TestEmulator;

beforeAll(() => {
  ensureBuilt();
}, 240_000);
// A fresh tenant for each run.
beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed());
});
afterEach(async () => {
  await emulator?.close();
});

/** Runs `orgsync sync` on a pseudo-terminal (`pacing`: platform keys to add); returns the exit code and what the terminal shows, line by line. */
async function syncOnTty(members: number, level: string, pacing = ''): Promise<{ code: number | null; raw: string; lines: string[] }> {
  const dir = tempDir('orgsync-tty-');
  writeFileSync(join(dir, 'departments.csv'), 'id,name\nsales,Sales\n');
  writeFileSync(join(dir, 'members.csv'), `id,name,mail,dept\n${Array.from({ length: members }, (_, i) => `e${i},Person ${i},p${i}@acme.test,sales`).join('\n')}\n`);
  const cfg = join(dir, 'orgsync.yaml');
  writeFileSync(
    cfg,
    `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\n${pacing}state:\n  path: state.db\nsync:\n  id: tty\nlog:\n  level: ${level}\n` +
      'sources:\n  - name: hr\n    type: csv\n    departments:\n      file: departments.csv\n      fields: { id: id, name: name }\n' +
      '    members:\n      file: members.csv\n      fields: { id: id, display_name: name, email: mail, department: dept }\n',
  );
  // Not spawnSync: the emulator runs in this process and must keep answering.
  const child = spawn('script', ['-qefc', `${process.execPath} ${CLI} sync --config ${cfg}`, '/dev/null'], { cwd: dir, env: { ...process.env, COLUMNS: '200' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const r = { status, stdout: out };
  // What stays visible of each line: the text after its last carriage return (a redraw overwrites the line).
  const lines = r.stdout.replace(/\r\n/g, '\n').split('\n').map((l) => l.slice(l.lastIndexOf('\r') + 1).split('\u001b[2K').join(''));
  return { code: r.status, raw: r.stdout, lines };
}

describe.skipIf(!hasScript)('sync on a terminal', () => {
  it('at info: a 20,000-member import prints fewer than 200 lines: no per-change lines, the progress line on its own, the summary last', async () => {
    // The emulator's limits are off and the pacing raised: 20,000 creates in seconds, not 200 s at 100/s.
    const { code, lines } = await syncOnTty(20_000, 'info', '  requests_per_second: 10000\n  tenant_requests_per_second: 10000\n  concurrency: 16\n');
    expect(code).toBe(0);
    expect(lines.filter((l) => /CREATE member/.test(l))).toEqual([]);
    expect(lines.filter((l) => l.includes('applying ')).every((l) => /^applying \d+\/\d+ changes/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('applying 20001/20001 changes (100%)'))).toBe(true);
    const visible = lines.filter((l) => l.trim() !== '');
    // The summary closes the output: its API calls line, then where every source record went (issue 32).
    expect(visible.at(-1)).toBe('  members: 20,000 records: 20,000 to create, 0 to update, 0 unchanged');
    expect(visible.findLast((l) => l.startsWith('API calls: '))).toMatch(/^API calls: \d+, 429s: \d+/);
    expect(visible.findIndex((l) => l.startsWith('applying 20001/20001'))).toBeLessThan(visible.findLastIndex((l) => l.startsWith('API calls: ')));
    expect(visible.length).toBeLessThan(200);
  }, 240_000);

  it('at debug: one short line per change, never glued to the progress line', async () => {
    const { code, raw, lines } = await syncOnTty(150, 'debug');
    expect(code).toBe(0);
    const changeLines = lines.filter((l) => l.includes('CREATE member'));
    expect(changeLines).toHaveLength(150);
    expect(changeLines).toContain(lines.find((l) => / DEBUG CREATE member e7 "Person 7" in \/Acme\/Sales$/.test(l)));
    expect(lines.find((l) => / DEBUG CREATE department sales "Sales" under \/Acme$/.test(l))).toBeDefined();
    // Every log line starts a line of its own: the progress text is cleared before it, never left in front of it.
    expect(raw).not.toMatch(/ETA [^\r\n]*\d{2}:\d{2}:\d{2} (DEBUG|INFO)/);
    expect(lines.every((l) => !(l.includes('applying ') && l.includes('CREATE')))).toBe(true);
  }, 240_000);
});
