/** Runs in every test file: removes the temporary folders the file made with tempDir(). */
import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/temp.js';

afterAll(() => {
  removeTempDirs();
});
