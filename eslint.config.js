// Lint rules, including orgsync/import-direction (tools/eslint-import-direction.js), the import map that
// docs/architecture.md draws: the folders of src/ below, and the package boundary of packages/emulator, which imports
// nothing of the sync (so one misreading of the spec cannot hide on both sides at once) and which src/ loads only
// through the dynamic import() of src/cli/emulator-door.ts; and orgsync/no-spread-arguments
// (tools/eslint-no-spread-arguments.js) in the shipped code: no array spread into a call and no .apply with an array,
// which overflow the call stack on a large list (issue 31). The code's shape (issue 30 point 7), measured as
// tools/code-shape.mjs and test/tools/code-shape.test.ts measure it: max-lines-per-function counting every line from a
// function's first line to its closing brace (blank lines, comments and IIFEs included), 80 in src/ and 100 in
// packages/emulator/src, and orgsync/no-import-cycle (tools/eslint-no-import-cycle.js) in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importDirectionRule } from './tools/eslint-import-direction.js';
import { noImportCycleRule } from './tools/eslint-no-import-cycle.js';
import { noSpreadArgumentsRule } from './tools/eslint-no-spread-arguments.js';

/** For each folder of src/: the other folders it may import from (itself and shared are always allowed). */
export const importDirection = {
  shared: [],
  domain: [],
  config: ['domain'],
  desired: ['domain', 'config'],
  planner: ['domain', 'config'],
  sources: ['domain', 'config', 'desired'],
  platform: ['domain', 'config'],
  mirror: ['domain', 'config'],
  applier: ['domain', 'config', 'planner', 'platform', 'mirror'],
  observability: ['domain', 'config'],
  daemon: ['domain', 'config', 'sources', 'desired', 'planner', 'applier', 'mirror', 'platform', 'observability'],
  app: ['domain', 'config', 'sources', 'desired', 'planner', 'applier', 'mirror', 'platform', 'observability', 'daemon'],
  cli: ['domain', 'config', 'sources', 'desired', 'planner', 'applier', 'mirror', 'platform', 'observability', 'daemon', 'app'],
};

/** The workspace packages (folder -> package name) and the one src/ file that may load them. */
export const packageBoundary = {
  packages: { 'packages/emulator': '@orgsync/emulator' },
  door: 'src/cli/emulator-door.ts',
};

export default tseslint.config(
  { ignores: ['.bench-out/**', '**/dist/**', '**/dist-bench/**', '**/node_modules/**', 'coverage/**', 'helm/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { orgsync: { rules: { 'import-direction': importDirectionRule, 'no-spread-arguments': noSpreadArgumentsRule, 'no-import-cycle': noImportCycleRule } } },
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', structuredClone: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', setImmediate: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'orgsync/import-direction': ['error', importDirection, packageBoundary],
    },
  },
  {
    // The shipped code handles lists as large as a tenant (a million members); tests and benchmarks build their own.
    files: ['src/**/*.ts', 'packages/emulator/src/**/*.ts'],
    rules: { 'orgsync/no-spread-arguments': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }],
      'orgsync/no-import-cycle': 'error',
    },
  },
  {
    files: ['packages/emulator/src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: false, skipComments: false, IIFEs: true }] },
  },
);
