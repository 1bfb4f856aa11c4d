/**
 * Starts the emulator in-process on 127.0.0.1, port 0, for tests, and offers a small JSON request helper.
 * Signature kept stable: other areas' tests use it. The emulator is the workspace package packages/emulator, imported
 * here by a relative path to its sources (no build needed under vitest); the helper itself lives with the package's
 * own tests.
 */
export { orgTestSeed, startTestEmulator, TEST_KEYS } from '../../packages/emulator/test/helpers/emulator.js';
export type { TestEmulator, TestEmulatorOptions, TestResponse } from '../../packages/emulator/test/helpers/emulator.js';
