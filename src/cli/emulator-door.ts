/**
 * The sync's one door to the emulator: the workspace package `@orgsync/emulator` (packages/emulator), loaded with a
 * dynamic import() by the `emulator` and `demo` commands only, so no other command loads it and the sync runs without
 * it (the production image does not carry it). Nothing else in src/ imports the emulator.
 *
 * The shape below is the part of the package these commands use; test/cli/emulator-door.test.ts checks at type level
 * that the package's real exports still fit it.
 */
import type { Logger } from '../shared/logger.js';
import { OrgsyncError } from '../shared/errors.js';

/** The package name the door imports (its built dist, resolved through node_modules). */
export const EMULATOR_PACKAGE = '@orgsync/emulator';

/** The one line `orgsync emulator` / `orgsync demo` print when the package is absent. */
export const EMULATOR_MISSING_MESSAGE = `the emulator package ${EMULATOR_PACKAGE} is not installed (it is not part of a production install); run the commands emulator and demo from a checkout after npm ci and npm run build, or from the image's demo target`;

/** A seed as the commands read it: its tenants and their API keys. */
export type EmulatorSeed = {
  tenants: { id: number; name: string; api_keys: { key: string; scopes: string[] }[] }[];
};

/** A running emulator. */
export interface RunningEmulatorHandle {
  url: string;
  translateUrl?: string;
  close(): Promise<void>;
}

/** Options of startEmulator that the commands pass (`seed` is what loadSeedFile returned). */
export interface EmulatorStartOptions {
  seed: EmulatorSeed;
  host: string;
  port: number;
  logger?: Logger;
  dbPath?: string;
  adminToken?: string;
  translatePort?: number;
}

/** The part of the package's exports the commands use. */
export interface EmulatorModule {
  loadSeedFile(path: string): EmulatorSeed;
  startEmulator(opts: EmulatorStartOptions): Promise<RunningEmulatorHandle>;
  isSeedError(err: unknown): boolean;
}

/** The commands' view of the package: a seed error becomes SEED_INVALID (exit 2), as before the move. */
export type EmulatorDoor = Pick<EmulatorModule, 'loadSeedFile' | 'startEmulator'>;

/** True when `err` says that `pkg` itself (not one of its own imports) cannot be found. */
function isMissing(err: unknown, pkg: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || (e.code !== 'ERR_MODULE_NOT_FOUND' && e.code !== 'MODULE_NOT_FOUND')) return false;
  return typeof e.message === 'string' && e.message.includes(`'${pkg}'`);
}

/**
 * Loads the emulator package. Throws EMULATOR_MISSING (one line, no stack) when it is not installed.
 * `specifier` is for tests (a package name that is never there).
 */
export async function openEmulatorDoor(specifier: string = EMULATOR_PACKAGE): Promise<EmulatorDoor> {
  let mod: EmulatorModule;
  try {
    mod = (await import(specifier)) as EmulatorModule;
  } catch (err) {
    if (isMissing(err, specifier)) throw new OrgsyncError('EMULATOR_MISSING', specifier === EMULATOR_PACKAGE ? EMULATOR_MISSING_MESSAGE : EMULATOR_MISSING_MESSAGE.replace(EMULATOR_PACKAGE, specifier));
    throw err;
  }
  const seedErrors = <T>(f: () => T): T => {
    try {
      return f();
    } catch (err) {
      if (mod.isSeedError(err)) throw new OrgsyncError('SEED_INVALID', (err as Error).message, { cause: err });
      throw err;
    }
  };
  return {
    loadSeedFile: (path) => seedErrors(() => mod.loadSeedFile(path)),
    startEmulator: async (opts) => {
      try {
        return await mod.startEmulator(opts);
      } catch (err) {
        if (mod.isSeedError(err)) throw new OrgsyncError('SEED_INVALID', (err as Error).message, { cause: err });
        throw err;
      }
    },
  };
}
