/**
 * The API areas the emulator mounts, in order. Each area adds one line here.
 */
import type { EmulatorArea } from './types.js';
import { orgArea } from '../org/index.js';
import { kbArea } from '../kb/index.js';
import { memoryArea } from '../memory/index.js';
import { messagingArea } from '../messaging/index.js';
import { auditArea } from '../audit/index.js';
import { authArea } from '../auth/index.js';

/** Every area of the emulator. */
export const areas: EmulatorArea[] = [
  orgArea,
  kbArea,
  memoryArea,
  messagingArea,
  auditArea,
  authArea,
];
