import { defineConfig } from 'vitest/config';

// The emulator's own tests (`npm test -w @orgsync/emulator`); the root's `npm test` runs them too.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
