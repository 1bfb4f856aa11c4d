import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT, OrgsyncError, isOrgsyncError, oneLine } from '../../src/shared/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

describe('error catalogue', () => {
  it('docs/errors.md lists every code with its exit status, and nothing else', () => {
    const rows = [...doc.matchAll(/^\| ([A-Z_]+) \| (\d) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });

  it('docs/errors.md lists every exit code', () => {
    const exits = [...doc.matchAll(/^\| (\d) \| [a-z`]/gm)].map((m) => Number(m[1]));
    expect(exits.sort()).toEqual(Object.values(EXIT).sort());
  });

  it('an OrgsyncError carries its exit code and is recognised', () => {
    const err = new OrgsyncError('GUARD_TRIPPED', 'delete threshold exceeded:\n 600 removals');
    expect(err.exitCode).toBe(3);
    expect(isOrgsyncError(err)).toBe(true);
    expect(isOrgsyncError(new Error('x'))).toBe(false);
    expect(oneLine(err)).toBe('delete threshold exceeded: 600 removals');
  });
});
