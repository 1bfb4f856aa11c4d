/** keysetPages (src/mirror/keyset.ts): every row once, in order, a page at a time, at any page boundary. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { keysetPages } from '../../src/mirror/keyset.js';

describe('keyset pages', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  const put = db.prepare('INSERT INTO t (k) VALUES (?)');
  const next = db.prepare('SELECT k FROM t WHERE k > ? ORDER BY k LIMIT ?').pluck();

  it.each([0, 1, 4, 5, 6, 10, 11])('%i rows in pages of 5: each once, in key order, no empty page', (n) => {
    db.exec('DELETE FROM t');
    const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(3, '0')}`);
    for (const k of [...keys].reverse()) put.run(k);
    let queries = 0;
    const pages = [...keysetPages((after: string, limit) => (queries++, next.all(after, limit) as string[]), (k) => k, '', 5)];
    expect(pages.flat()).toEqual(keys);
    expect(pages.every((p) => p.length > 0 && p.length <= 5)).toBe(true);
    // A short page ends the walk; a full last page costs one more query, which finds nothing.
    expect(queries).toBe(Math.floor(n / 5) + 1);
  });

  it('a row written between two pages past the last key read is seen, one before it is not, none twice', () => {
    db.exec('DELETE FROM t');
    for (const k of ['b', 'd', 'f', 'h']) put.run(k);
    const seen: string[] = [];
    for (const page of keysetPages((after: string, limit) => next.all(after, limit) as string[], (k) => k, '', 2)) {
      seen.push(...page);
      if (seen.length === 2) for (const k of ['a', 'e']) put.run(k);
    }
    expect(seen).toEqual(['b', 'd', 'e', 'f', 'h']);
  });
});
