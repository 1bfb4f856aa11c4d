import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { processTestFiles } from './test/helpers/test-kinds.js';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Test files at once. vitest's default is one fewer than the cores: a single worker on the 2-core machine, where the
 * suite ran file after file for 13 minutes with the CPU half idle (most files wait on the emulator, a child process,
 * slapd or a timer). Two per core keeps both busy. ORGSYNC_TEST_WORKERS overrides it (1 for a serial run).
 */
const workers = Number(process.env.ORGSYNC_TEST_WORKERS) || Math.max(2, Math.min(2 * availableParallelism(), 8));

export default defineConfig(({ mode }) => {
  // `npm run test:quick` (vitest --mode quick), the inner loop: the unit and in-process tests. `npm test` and CI run all.
  const quick = mode === 'quick';
  return {
    resolve: {
      // In-process tests (e.g. `main(['demo'])`) load the emulator package through the CLI's door, import('@orgsync/emulator'):
      // here that is the package's sources, so the tests need no build of it (the built CLI resolves its dist).
      alias: { '@orgsync/emulator': fileURLToPath(new URL('./packages/emulator/src/index.ts', import.meta.url)) },
    },
    test: {
      // The sync's tests and the emulator package's own (which `npm test -w @orgsync/emulator` also runs).
      include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
      // The quick run leaves out the files that start processes (test/helpers/test-kinds.ts finds them from their imports).
      exclude: quick ? [...configDefaults.exclude, ...processTestFiles(root)] : configDefaults.exclude,
      // A file in a fresh process costs about a second of CPU to load the app and the emulator again, half of what the
      // quick run would spend: there the files a worker runs share the loaded modules. `npm test` keeps every file
      // apart, so state a file leaves in a module (a registered secret, an environment variable) reaches no other.
      isolate: !quick,
      // A private TMPDIR for the run, checked for leftover orgsync-* folders at the end; each file removes its own.
      globalSetup: ['test/global-setup.ts'],
      setupFiles: ['test/setup.ts'],
      // Forks keep better-sqlite3 and slapd children isolated per file.
      pool: 'forks',
      maxWorkers: workers,
      testTimeout: 30_000,
      hookTimeout: 60_000,
      reporters: ['default'],
    },
  };
});
