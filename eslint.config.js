// Lint rules, including the import direction of ../shared/ARCHITECTURE.md:
//   cli -> daemon -> {sources, desired, planner, applier, mirror, platform} -> domain; everything may use shared.
// The emulator imports nothing of the sync, so one misreading of the spec cannot hide on both sides at once.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importDirectionRule } from './tools/eslint-import-direction.js';

/** For each folder of src/: the other folders it may import from (itself and shared are always allowed). */
const importDirection = {
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
  emulator: [],
  cli: ['domain', 'config', 'sources', 'desired', 'planner', 'applier', 'mirror', 'platform', 'observability', 'daemon', 'emulator'],
};

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', 'coverage/**', 'helm/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { orgsync: { rules: { 'import-direction': importDirectionRule } } },
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', structuredClone: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', setImmediate: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'orgsync/import-direction': ['error', importDirection],
    },
  },
);
