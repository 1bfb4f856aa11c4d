/** toFailure (issue 31): a failure read from its result is, to every reader, the plain failure it stands for. */
import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../src/applier/index.js';
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
