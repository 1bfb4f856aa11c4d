/**
 * Runs in every test file: starts it without the secrets and paging parameters another file registered (the quick
 * run shares modules between files), and removes the temporary folders the file made with tempDir().
 */
import { afterAll } from 'vitest';
import { forgetRegistered } from '../src/shared/redact.js';
import { removeTempDirs } from './helpers/temp.js';

forgetRegistered();

afterAll(() => {
  removeTempDirs();
});
