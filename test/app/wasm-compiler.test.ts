/**
 * The orgsync bin keeps WebAssembly on V8's baseline compiler (src/app/wasm-compiler.ts, issue 31): TurboFan's
 * recompilation of undici's HTTP parser left up to 8 MB of a worker thread's malloc arena resident. V8 tells which
 * compiler a wasm function runs on (%IsLiftoffFunction, %IsTurboFanFunction); a preloaded probe asks it when the
 * command is done, after making a small function hot, until it tiered up or 5 s went by. The same probe under a bare node must see the function tier up,
 * so a V8 whose tiering the probe cannot observe fails the test instead of passing it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, repoRoot } from '../helpers/build.js';
import { tempDir } from '../helpers/temp.js';

// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const ADD_MODULE = [0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11];

/** Runs `node --require probe ...args` and returns the compiler V8 used for a hot wasm function once args were done. */
function wasmCompilerAfter(args: string[]): { liftoff: boolean; turbofan: boolean } {
  const dir = tempDir('orgsync-wasm-');
  const out = join(dir, 'tier.json');
  writeFileSync(join(dir, 'probe.cjs'), `
const { setFlagsFromString } = require('node:v8');
const { writeFileSync } = require('node:fs');
let probed = false;
process.on('beforeExit', () => {
  if (probed) return;
  probed = true;
  setFlagsFromString('--allow-natives-syntax');
  const tier = new Function('f', 'return { liftoff: %IsLiftoffFunction(f), turbofan: %IsTurboFanFunction(f) }');
  const { add } = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify(ADD_MODULE)}))).exports;
  let s = 0;
  for (let i = 0; i < 2e7; i++) s = add(s, 1) & 0xffff;
  // TurboFan compiles on a worker thread, and calls run whichever code V8 has installed: ask again until it tiered up
  // or 5 s went by (a bare node tiers up within milliseconds; the bin must not in the whole time).
  const deadline = Date.now() + 5000;
  const ask = () => {
    for (let i = 0; i < 2e6; i++) s = add(s, 1) & 0xffff;
    const t = tier(add);
    if (t.turbofan || Date.now() > deadline) writeFileSync(${JSON.stringify(out)}, JSON.stringify(t));
    else setTimeout(ask, 100);
  };
  setTimeout(ask, 100);
});
`);
  const r = spawnSync(process.execPath, ['--require', join(dir, 'probe.cjs'), ...args], { cwd: repoRoot, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(readFileSync(out, 'utf8')) as { liftoff: boolean; turbofan: boolean };
}

describe('the orgsync bin and WebAssembly', () => {
  beforeAll(() => ensureBuilt(), 600_000);

  it('a bare node tiers a hot wasm function up to TurboFan (the probe sees tiering)', () => {
    expect(wasmCompilerAfter(['-e', '0'])).toEqual({ liftoff: false, turbofan: true });
  });

  it('the bin keeps it on the baseline compiler for the whole process', () => {
    expect(wasmCompilerAfter([CLI, '--version'])).toEqual({ liftoff: true, turbofan: false });
  });
});
