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
  it('refuses the emulator importing the sync', async () => {
    expect(await lint('src/emulator/x.ts', "import { loadConfig } from '../config/load.js';\nexport const y = loadConfig;\n")).toEqual([
      'src/emulator may not import from src/config (allowed: emulator, shared; see ARCHITECTURE.md).',
    ]);
  });

  it('refuses the mirror importing the platform client', async () => {
    expect(await lint('src/mirror/x.ts', "export * from '../platform/client.js';\n")).toHaveLength(1);
  });

  it('refuses a pure planner importing the mirror, even through a dynamic import', async () => {
    expect(await lint('src/planner/x.ts', "export const m = () => import('../mirror/index.js');\n")).toHaveLength(1);
  });

  it('allows the daemon to use the stages and every folder to use shared', async () => {
    expect(await lint('src/daemon/x.ts', "export * from '../planner/index.js';\nexport * from '../shared/clock.js';\n")).toEqual([]);
    expect(await lint('src/emulator/core/x.ts', "export * from '../../shared/clock.js';\nexport * from '../org/seed.js';\n")).toEqual([]);
  });
});
