/** The CLI's one door to the emulator package: what it loads, and the one line when the package is absent. */
import { describe, expect, it } from 'vitest';
import { EMULATOR_MISSING_MESSAGE, openEmulatorDoor, type EmulatorModule } from '../../src/cli/emulator-door.js';
import * as emulatorPackage from '../../packages/emulator/src/index.js';

describe('the emulator door', () => {
  it("the package's real exports fit the shape the commands use (checked by the typecheck)", () => {
    const fits: EmulatorModule = emulatorPackage;
    expect(typeof fits.startEmulator).toBe('function');
  });

  it('reports an absent package as EMULATOR_MISSING, one line, exit 1', async () => {
    const err = await openEmulatorDoor('@orgsync/emulator-not-installed').then(
      () => undefined,
      (e: unknown) => e as { code: string; exitCode: number; message: string },
    );
    expect(err?.code).toBe('EMULATOR_MISSING');
    expect(err?.exitCode).toBe(1);
    expect(err?.message).toBe(EMULATOR_MISSING_MESSAGE.replace('@orgsync/emulator', '@orgsync/emulator-not-installed'));
    expect(err?.message).not.toContain('\n');
  });

  it('turns a seed error of the package into SEED_INVALID (exit 2), as before the move', async () => {
    const door = await openEmulatorDoor();
    let caught: { code?: string; exitCode?: number; name?: string } | undefined;
    try {
      door.loadSeedFile('/nonexistent/orgsync-seed.yaml');
    } catch (err) {
      caught = err as typeof caught;
    }
    expect(caught).toMatchObject({ name: 'OrgsyncError', code: 'SEED_INVALID', exitCode: 2 });
  });
});
