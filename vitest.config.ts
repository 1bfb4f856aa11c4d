import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // In-process tests (e.g. `main(['demo'])`) load the emulator package through the CLI's door, import('@orgsync/emulator'):
    // here that is the package's sources, so the tests need no build of it (the built CLI resolves its dist).
    alias: { '@orgsync/emulator': fileURLToPath(new URL('./packages/emulator/src/index.ts', import.meta.url)) },
  },
  test: {
    // The sync's tests and the emulator package's own (which `npm test -w @orgsync/emulator` also runs).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // A private TMPDIR for the run, checked for leftover orgsync-* folders at the end; each file removes its own.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    // Two cores here and in CI: forks keep better-sqlite3 and slapd children isolated per file.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
