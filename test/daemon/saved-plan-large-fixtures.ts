/** Plans of many synthetic changes for the saved-plan tests of issue 31 (made in memory, not by the planner). */
import type { Change, Plan } from '../../src/domain/index.js';
import { countChanges, PLAN_FORMAT_VERSION } from '../../src/domain/index.js';

/** The source id of synthetic member `i`. */
export const memberSourceId = (i: number): string => `E${String(i).padStart(7, '0')}`;

/** A member create as the planner makes one (the request body carries the fields); `description` replaces its own. */
export function memberCreate(i: number, description?: string): Change {
  const id = memberSourceId(i);
  const fields = { third_user_id: id, display_name: `Person ${i} Ünïcode ☃ "q"`, email: `p${i}@acme.test`, department_id: { ref: `departments:create:D${i % 50}` }, roles: ['member'], external: i % 7 === 0 };
  return {
    id: `members:create:${id}`,
    entity: 'members',
    op: 'create',
    thirdId: id,
    description: description ?? `create member ${id}`,
    reason: 'missing on the platform',
    fields,
    request: { method: 'POST', path: '/api/external/v1/org/members', body: fields },
    dependsOn: [`departments:create:D${i % 50}`],
  } as Change;
}

/** A plan of sync `syncId` holding `changes`, one warning, made at a fixed time. */
export function planOf(changes: Change[], syncId = 'large'): Plan {
  return {
    formatVersion: PLAN_FORMAT_VERSION,
    syncId,
    policy: 'full',
    createdAt: '2026-11-27T12:00:00.000Z',
    changes,
    warnings: [{ code: 'unpatchable_drift', entity: 'members', thirdId: 'E0000001', message: 'phone differs' }],
    withheld: [],
    counts: countChanges(changes),
  } as Plan;
}
