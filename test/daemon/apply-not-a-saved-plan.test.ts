/**
 * Issue 32 point 6: `orgsync apply FILE` on a file that is not a saved plan (the JSON output of `plan --output json`,
 * other JSON, garbage) says so, names the file and says how to make one, through the CLI. Nothing is written.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';
import { cli, writeCalls } from '../helpers/cli.js';

const TREE = org({ departments: [['eng', 'Engineering']], positions: [], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] });
const HOW = 'save one with `orgsync plan --out FILE`';

let emulator: TestEmulator;
let dir: string;
let config: string;

beforeAll(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-apply-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
});
afterAll(async () => {
  await emulator.close();
});

describe('orgsync apply FILE on a file that is not a saved plan', () => {
  it('names the output of `plan --output json` for what it is and says how to save a plan (exit 2, nothing written)', async () => {
    const planJson = await cli('plan', '--config', config, '--output', 'json');
    expect(planJson.code).toBe(0);
    const file = join(dir, 'plan-output.json');
    writeFileSync(file, planJson.stdout);
    const r = await cli('apply', file, '--config', config);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`orgsync: ${file} is not a saved plan (it is the output of \`orgsync plan --output json\`, which is for reading and carries no signature): ${HOW}\n`);
    expect(await writeCalls(emulator)).toBe(0);
  });

  it('says what is missing in other JSON, and that text is not JSON, each with the way to save a plan', async () => {
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ hello: 'world' }));
    const r1 = await cli('apply', other, '--config', config);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toBe(`orgsync: ${other} is not a saved plan (kind: Invalid input: expected "orgsync-saved-plan"): ${HOW}\n`);

    const garbage = join(dir, 'garbage.txt');
    writeFileSync(garbage, 'not json at all');
    const r2 = await cli('apply', garbage, '--config', config);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(new RegExp(`^orgsync: ${garbage.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a saved plan \\(not JSON: .+\\): save one with \`orgsync plan --out FILE\`\\n$`));
    expect(await writeCalls(emulator)).toBe(0);
  });
});
