/**
 * The API areas the emulator mounts, in order. Each area adds one line here.
 */
import type { EmulatorArea } from './types.js';
import { orgArea } from '../org/index.js';
import { kbArea } from '../kb/index.js';
import { authArea } from '../auth/index.js';

/** Every area of the emulator. */
export const areas: EmulatorArea[] = [
  orgArea,
  kbArea,
  authArea,
];
