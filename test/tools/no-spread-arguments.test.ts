/**
 * orgsync/no-spread-arguments (tools/eslint-no-spread-arguments.js, issue 31 point 1): the shipped code spreads no
 * array into a call and passes none through .apply, since a large one overflows the call stack (`orgsync plan` of
 * 200,000 members failed on `Math.max(...)`); spreads inside literals stay allowed.
 */
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function lint(code: string, file = 'src/planner/x.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'orgsync/no-spread-arguments').map((m) => `${m.line}:${m.column} ${m.message}`);
}

const overflow = 'puts every element on the call stack: a large array throws "Maximum call stack size exceeded".';

describe('no spread into call arguments, no .apply with an array', () => {
  it('refuses Math.max(...xs) and a.push(...b), saying why and what to do instead', async () => {
    expect(await lint('export function widest(xs: number[]): number {\n  return Math.max(...xs);\n}\n')).toEqual([
      `2:19 Spreading an array into call arguments (Math.max(...)) ${overflow} Loop instead (for ... of, or reduce); if the list is bounded, say why in an eslint-disable comment.`,
    ]);
    expect(await lint('export function append(a: string[], b: string[]): void {\n  a.push(...b);\n}\n')).toEqual([
      `2:10 Spreading an array into call arguments (a.push(...)) ${overflow} Loop instead (for ... of, or reduce); if the list is bounded, say why in an eslint-disable comment.`,
    ]);
    expect(await lint('export const s = (xs: string[]) => new Array<string>(...xs);\n')).toHaveLength(1);
  });

  it('refuses Function.prototype.apply with an array, in its usual forms, and Reflect.apply', async () => {
    expect(await lint('export const m = (xs: number[]) => Math.max.apply(Math, xs);\n')).toEqual([
      `1:36 Passing an array through Math.max.apply ${overflow} Loop instead; if the list is bounded, say why in an eslint-disable comment.`,
    ]);
    expect(await lint('export function f(this: unknown, fn: (...a: unknown[]) => void, args: unknown[]) {\n  fn.apply(this, args);\n}\n')).toHaveLength(1);
    expect(await lint('export const p = (a: number[], b: number[]) => Array.prototype.push.apply(a, b);\n')).toHaveLength(1);
    expect(await lint('export const r = (xs: number[]) => Reflect.apply(Math.max, undefined, xs);\n')).toHaveLength(1);
  });

  it('allows spreads inside array and object literals, written-out lists, and methods that are merely named apply', async () => {
    expect(await lint('export const both = (a: string[], b: string[]) => [...a, ...b];\nexport const merged = (o: object) => ({ ...o, x: 1 });\n')).toEqual([]);
    expect(await lint("export const set = (a: string[]) => new Set([...a, 'x']);\nexport const joined = (a: string[]) => [a, ['y']].flat();\n")).toEqual([]);
    expect(await lint("export const two = () => Math.max(...[1, 2]);\nexport const rule = { apply: (m: number, n: number) => m + n };\nexport const r = rule.apply(1, 2);\n")).toEqual([]);
  });

  it('applies to the shipped code (src/, the emulator package), not to tests and benchmarks', async () => {
    const code = 'export const m = (xs: number[]) => Math.max(...xs);\n';
    expect(await lint(code, 'packages/emulator/src/core/x.ts')).toHaveLength(1);
    expect(await lint(code, 'test/planner/x.test.ts')).toEqual([]);
    expect(await lint(code, 'bench/x.ts')).toEqual([]);
  });

  it('is quiet where an eslint-disable comment says why the list is bounded', async () => {
    const code = 'export function f(xs: number[]): number {\n  // eslint-disable-next-line orgsync/no-spread-arguments -- at most the 12 columns of one row\n  return Math.max(...xs);\n}\n';
    expect(await lint(code)).toEqual([]);
  });
});
