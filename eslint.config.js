// Lint rules, including the import direction of ../shared/ARCHITECTURE.md:
//   cli -> daemon -> {sources, desired, planner, applier, mirror, platform} -> domain; everything may use shared.
// The emulator imports nothing of the sync, so one misreading of the spec cannot hide on both sides at once.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const stage = (name) => `./src/${name}`;
const all = ['cli', 'daemon', 'config', 'sources', 'desired', 'mirror', 'planner', 'applier', 'platform', 'domain', 'observability', 'emulator'];
/** A zone that lets `target` import only from `allowed` (plus itself and shared). */
const onlyFrom = (target, allowed) => ({
  target: stage(target),
  from: all.filter((n) => n !== target && !allowed.includes(n)).map(stage),
  message: `src/${target} may import only from: ${['shared', ...allowed].join(', ')} (see ARCHITECTURE.md).`,
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'helm/**', '.bench-out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', structuredClone: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', setImmediate: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-restricted-paths': ['error', {
        zones: [
          onlyFrom('domain', []),
          onlyFrom('config', ['domain']),
          onlyFrom('desired', ['domain', 'config']),
          onlyFrom('planner', ['domain', 'config']),
          onlyFrom('sources', ['domain', 'config', 'desired']),
          onlyFrom('platform', ['domain', 'config']),
          onlyFrom('mirror', ['domain', 'config']),
          onlyFrom('applier', ['domain', 'config', 'planner', 'platform', 'mirror']),
          onlyFrom('observability', ['domain', 'config']),
          onlyFrom('daemon', ['domain', 'config', 'sources', 'desired', 'planner', 'applier', 'mirror', 'platform', 'observability']),
          onlyFrom('emulator', []),
          { target: './src/shared', from: all.map(stage), message: 'src/shared is the bottom layer: it imports nothing internal.' },
        ],
      }],
    },
  },
);
