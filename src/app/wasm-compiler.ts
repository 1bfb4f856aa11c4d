import { setFlagsFromString } from 'node:v8';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) for the rest of the process (issue 31).
 *
 * undici parses HTTP with llhttp compiled to WebAssembly. Once a run has sent a few thousand requests the parser is
 * hot, and V8 recompiles it with TurboFan on a worker thread. That one compilation takes about 36 MB of scratch memory
 * in the worker's malloc arena, and glibc kept up to 8 MB of it resident to the end of the process: the 100,000-member
 * initial sync peaked at 162-165 MB in about half the runs and 154-155 MB in the others, the difference being that
 * arena. The baseline code parses a platform response of a few kilobytes fast enough: the sync's wall time did not
 * change measurably. Not a heap setting: V8's heap and its limits stay Node's defaults.
 *
 * Call before the first request (the module is compiled at undici's first request); the orgsync bin does it first.
 */
export function keepWasmOnBaselineCompiler(): void {
  setFlagsFromString('--liftoff-only');
}
