/**
 * toFailure and the not-started list (issue 31): a failure read from its result, and a list of failures read from
 * plan positions, are to every reader the plain failure and the plain array they stand for.
 */
import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../src/applier/index.js';
import { appendFailures, notStartedList, notStartedOf } from '../../src/daemon/pipeline/not-started.js';
import { toFailure } from '../../src/daemon/pipeline/run-state.js';
import { memberCreateChange, type Change } from '../../src/domain/index.js';

const update: Change = {
  id: 'members:update:E1',
  entity: 'members',
  op: 'update',
  thirdId: 'E1',
  platformId: 'acc-1',
  description: 'suspend member E1',
  reason: 'status differs',
  fields: { status: 'suspended' },
  request: { method: 'PATCH', path: '/org/members/acc-1', body: { status: 'suspended' } },
  dependsOn: [],
};
const create = memberCreateChange({ id: 'members:create:E2', thirdId: 'E2', reason: 'missing on the platform', fields: { display_name: 'Ann Lee', third_user_id: 'E2' }, dependsOn: [] });

describe('toFailure', () => {
  it('reads as the plain failure: keys in order, JSON, spread, strict equality', () => {
    const cases: [ChangeResult, Record<string, unknown>][] = [
      [{ change: update, status: 'failed', message: 'HTTP 500' }, { id: 'members:update:E1', entity: 'members', op: 'update', thirdId: 'E1', platformId: 'acc-1', status: 'failed', message: 'HTTP 500' }],
      [{ change: create, status: 'not_started', message: 'not started: the run was asked to stop' }, { id: 'members:create:E2', entity: 'members', op: 'create', thirdId: 'E2', status: 'not_started', message: 'not started: the run was asked to stop' }],
      [{ change: create, status: 'conflict', platformId: 'acc-9' }, { id: 'members:create:E2', entity: 'members', op: 'create', thirdId: 'E2', platformId: 'acc-9', status: 'conflict', message: 'conflict' }],
    ];
    for (const [result, plain] of cases) {
      const f = toFailure(result);
      expect(Object.keys(f)).toEqual(Object.keys(plain));
      expect(JSON.stringify(f)).toBe(JSON.stringify(plain));
      expect({ ...f }).toStrictEqual(plain);
      expect(f).toStrictEqual(plain);
      expect(Object.getPrototypeOf(f)).toBe(Object.prototype);
    }
  });
});

describe('notStartedList', () => {
  const changes = Array.from({ length: 6 }, (_, i) => memberCreateChange({ id: `members:create:E${i}`, thirdId: `E${i}`, reason: 'missing on the platform', fields: { display_name: `P ${i}`, third_user_id: `E${i}` }, dependsOn: [] }));
  const why = 'not started: the run was asked to stop';
  const plain = [1, 3, 4].map((i) => ({ id: `members:create:E${i}`, entity: 'members', op: 'create', thirdId: `E${i}`, status: 'not_started', message: why }));

  it('reads as the array of the failures at the positions: length, indexes, iteration, map, JSON, equality', () => {
    const list = notStartedList(changes, [1, 3, 4], why);
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBe(3);
    expect(list[0]).toStrictEqual(plain[0]);
    expect(list[3]).toBeUndefined();
    expect(2 in list).toBe(true);
    expect(3 in list).toBe(false);
    expect([...list]).toStrictEqual(plain);
    expect(list.map((f) => f.thirdId)).toEqual(['E1', 'E3', 'E4']);
    expect(JSON.stringify(list)).toBe(JSON.stringify(plain));
    expect(list).toEqual(plain);
    expect(Object.keys(list)).toEqual(['0', '1', '2']);
  });

  it('is read-only; appendFailures adds to a plain copy of it and to a plain array in place', () => {
    const list = notStartedList(changes, [1, 3, 4], why);
    expect(() => list.push(plain[0] as never)).toThrow(TypeError);
    expect(list.length).toBe(3);
    const extra = toFailure({ change: changes[5]!, status: 'failed', message: 'HTTP 500' });
    const grown = appendFailures(list, [extra]);
    expect(grown).not.toBe(list);
    expect(grown.map((f) => f.id)).toEqual(['members:create:E1', 'members:create:E3', 'members:create:E4', 'members:create:E5']);
    const own = [extra];
    expect(appendFailures(own, list)).toBe(own);
    expect(own.length).toBe(4);
  });

  it('lists those refused as they started first, then those left unstarted (notStartedOf)', () => {
    const refused: ChangeResult = { change: changes[0]!, status: 'not_started', message: 'not started: the lease was lost' };
    const of = notStartedOf({ results: [refused, { change: changes[2]!, status: 'failed', message: 'x' }], notStarted: { positions: [4, 5], message: why } }, changes);
    expect(of.map((f) => [f.thirdId, f.message])).toEqual([
      ['E0', 'not started: the lease was lost'],
      ['E4', why],
      ['E5', why],
    ]);
    // One list, read when read (those left unstarted are not copied behind the refused ones).
    expect(() => of.push(of[0]!)).toThrow(TypeError);
    expect(JSON.stringify(of)).toBe(JSON.stringify([...of]));
    expect(notStartedOf({ results: [], notStarted: { positions: [4], message: why } }, changes).map((f) => f.thirdId)).toEqual(['E4']);
    expect(notStartedOf({ results: [] }, changes)).toEqual([]);
  });
});
