import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function lint(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'orgsync/import-direction').map((m) => m.message);
}

describe('import direction lint rule', () => {
  it('refuses the emulator package importing the sync, or anything else outside its package', async () => {
    expect(await lint('packages/emulator/src/core/x.ts', "import { loadConfig } from '../../../../src/config/load.js';\nexport const y = loadConfig;\n")).toEqual([
      'packages/emulator may not import from outside its package (src/config/load.js): it shares nothing with the sync (see docs/architecture.md).',
    ]);
    expect(await lint('packages/emulator/src/core/x.ts', "export * from '../../../../src/shared/clock.js';\n")).toHaveLength(1);
    expect(await lint('packages/emulator/test/core/x.test.ts', "export * from '../../../../test/daemon/support.js';\n")).toHaveLength(1);
  });

  it('allows the emulator package its own files', async () => {
    expect(await lint('packages/emulator/src/core/x.ts', "export * from './clock.js';\nexport * from '../org/seed.js';\n")).toEqual([]);
    expect(await lint('packages/emulator/test/core/x.test.ts', "export * from '../../src/index.js';\nexport * from '../helpers/emulator.js';\n")).toEqual([]);
  });

  it('refuses src/ loading the emulator package other than through the dynamic import() of its one door', async () => {
    expect(await lint('src/daemon/x.ts', "export * from '../../packages/emulator/src/index.js';\n")).toEqual([
      'src/ may not import the packages/emulator package (@orgsync/emulator) except by a dynamic import() in src/cli/emulator-door.ts (see docs/architecture.md).',
    ]);
    expect(await lint('src/cli/commands/x.ts', "import { startEmulator } from '@orgsync/emulator';\nexport const s = startEmulator;\n")).toHaveLength(1);
    expect(await lint('src/cli/commands/x.ts', "export const m = () => import('@orgsync/emulator');\n")).toHaveLength(1);
    // The door itself: a dynamic import() yes, a static one no.
    expect(await lint('src/cli/emulator-door.ts', "export const m = () => import('@orgsync/emulator');\n")).toEqual([]);
    expect(await lint('src/cli/emulator-door.ts', "export * from '@orgsync/emulator';\n")).toHaveLength(1);
  });

  it('lets tests and benchmarks of the sync start the emulator from its sources', async () => {
    expect(await lint('test/helpers/x.ts', "export * from '../../packages/emulator/src/index.js';\n")).toEqual([]);
    expect(await lint('bench/x.ts', "export * from '../packages/emulator/src/index.js';\n")).toEqual([]);
  });

  it('refuses the mirror importing the platform client', async () => {
    expect(await lint('src/mirror/x.ts', "export * from '../platform/client.js';\n")).toEqual([
      'src/mirror may not import from src/platform (allowed: mirror, shared, domain, config; see docs/architecture.md).',
    ]);
  });

  it('refuses a pure planner importing the mirror, even through a dynamic import', async () => {
    expect(await lint('src/planner/x.ts', "export const m = () => import('../mirror/index.js');\n")).toHaveLength(1);
  });

  it('allows the daemon to use the stages and every folder to use shared', async () => {
    expect(await lint('src/daemon/x.ts', "export * from '../planner/index.js';\nexport * from '../shared/clock.js';\n")).toEqual([]);
    expect(await lint('src/sources/csv/x.ts', "export * from '../../shared/clock.js';\nexport * from '../../desired/index.js';\n")).toEqual([]);
  });
});
