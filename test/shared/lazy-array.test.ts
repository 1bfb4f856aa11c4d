import { describe, expect, it } from 'vitest';
import { jsonChunks } from '../../src/shared/json-chunks.js';
import { lazyArray, lazyMap } from '../../src/shared/lazy-array.js';

describe('lazyArray and lazyMap', () => {
  const source = [{ n: 1 }, { n: 2 }, { n: 3 }];

  it('reads as the mapped array: Array.isArray, length, indexes, iteration, map, JSON and equality', () => {
    const list = lazyMap(source, (x) => ({ twice: x.n * 2 }));
    const plain = source.map((x) => ({ twice: x.n * 2 }));
    expect(Array.isArray(list)).toBe(true);
    expect(list).toHaveLength(3);
    expect(list[1]).toEqual({ twice: 4 });
    expect(list[3]).toBeUndefined();
    expect([...list]).toEqual(plain);
    expect(list.map((x) => x.twice)).toEqual([2, 4, 6]);
    expect(Object.keys(list)).toEqual(['0', '1', '2']);
    expect(1 in list).toBe(true);
    expect(3 in list).toBe(false);
    expect(JSON.stringify(list)).toBe(JSON.stringify(plain));
    expect([...jsonChunks({ list }, 'pretty')].join('')).toBe(JSON.stringify({ list: plain }, null, 2));
    expect(list).toEqual(plain);
  });

  it('makes an element only when it is read, again at each read', () => {
    let made = 0;
    const list = lazyArray(1_000_000, (k) => (made++, { k }));
    expect(list).toHaveLength(1_000_000);
    expect(made).toBe(0);
    expect(list[999_999]).toEqual({ k: 999_999 });
    expect(list[999_999]).not.toBe(list[999_999]);
    expect(made).toBe(3);
  });

  it('is read-only', () => {
    const list = lazyMap(source, (x) => x.n);
    expect(() => {
      (list as number[])[0] = 9;
    }).toThrow(TypeError);
    expect(() => (list as number[]).push(4)).toThrow(TypeError);
    expect(Reflect.deleteProperty(list, '0')).toBe(false);
    expect([...list]).toEqual([1, 2, 3]);
  });
});
