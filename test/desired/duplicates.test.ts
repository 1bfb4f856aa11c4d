/** SeenKeys (src/desired/duplicates.ts): the duplicate checks of ids, e-mails and phones. */
import { describe, expect, it } from 'vitest';
import { SeenKeys } from '../../src/desired/duplicates.js';

describe('SeenKeys', () => {
  it('answers true exactly for keys added before, past its expected size (it grows)', () => {
    const seen = new SeenKeys(4);
    const keys = Array.from({ length: 5_000 }, (_, i) => `E${i}@example.com`);
    expect(keys.map((k) => seen.add(k)).some(Boolean)).toBe(false);
    // Equal strings built apart (not the same object) are the same key.
    expect(keys.map((k) => seen.add(`${k.slice(0, 1)}${k.slice(1)}`)).every(Boolean)).toBe(true);
    expect(seen.add('E5000@example.com')).toBe(false);
    expect(seen.add('E5000@example.com')).toBe(true);
  });

  it('tells apart keys whose hashes collide, and the empty string and non-ASCII keys', () => {
    const seen = new SeenKeys(2);
    // FNV-1a collisions are rare; one table slot per key is enough to force probing: fill a tiny table densely.
    const keys = ['', 'a', 'b', 'ab', 'ba', 'é', 'e\u0301', '😀', '+12015550123', '+12015550132'];
    for (const k of keys) expect(seen.add(k)).toBe(false);
    for (const k of keys) expect(seen.add(k)).toBe(true);
  });
});
