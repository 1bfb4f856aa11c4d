import { describe, expect, it } from 'vitest';
import type { PlanWarning } from '../../src/domain/index.js';
import { calculatePlan, orderMoves } from '../../src/planner/index.js';
import { desired, dept, OPTS, ROOT, snapshot } from './fixtures.js';

describe('orderMoves', () => {
  it('swaps a parent and its child without an intermediate cycle', () => {
    const p = dept({ id: 'dp', name: 'P', third_department_id: 'p' });
    const c = dept({ id: 'dc', name: 'C', parent_id: 'dp', depth: 2, third_department_id: 'c', path: '/Acme/P/C' });
    const plan = calculatePlan(desired({ departments: [{ source_id: 'c', name: 'C' }, { source_id: 'p', name: 'P', parent_source_id: 'c' }] }), snapshot({ departments: [ROOT, p, c] }), OPTS);
    expect(plan.changes.map((x) => [x.id, x.request?.body])).toEqual([
      ['departments:move:c', { parent_id: '' }],
      ['departments:move:p', { parent_id: 'dc' }],
    ]);
    expect(plan.changes[1]!.dependsOn).toEqual(['departments:move:c']);
  });

  it('reverses a chain A/B/C into C/B/A', () => {
    const a = dept({ id: 'da', name: 'A', third_department_id: 'a' });
    const b = dept({ id: 'db', name: 'B', parent_id: 'da', depth: 2, third_department_id: 'b' });
    const c = dept({ id: 'dc', name: 'C', parent_id: 'db', depth: 3, third_department_id: 'c' });
    const plan = calculatePlan(
      desired({ departments: [{ source_id: 'c', name: 'C' }, { source_id: 'b', name: 'B', parent_source_id: 'c' }, { source_id: 'a', name: 'A', parent_source_id: 'b' }] }),
      snapshot({ departments: [ROOT, a, b, c] }),
      OPTS,
    );
    expect(plan.changes.map((x) => x.id)).toEqual(['departments:move:c', 'departments:move:b', 'departments:move:a']);
    // Replay the moves: every intermediate tree is acyclic.
    const parent = new Map([['da', 'root'], ['db', 'da'], ['dc', 'db']]);
    for (const ch of plan.changes) {
      const to = (ch.request!.body!.parent_id as string) || 'root';
      let cur: string | undefined = to;
      while (cur && cur !== 'root') {
        expect(cur).not.toBe(ch.platformId);
        cur = parent.get(cur);
      }
      parent.set(ch.platformId!, to);
    }
  });

  it('moves under a department created in the same run, after its create', () => {
    const a = dept({ id: 'da', name: 'A', third_department_id: 'a' });
    const plan = calculatePlan(desired({ departments: [{ source_id: 'n', name: 'N' }, { source_id: 'a', name: 'A', parent_source_id: 'n' }] }), snapshot({ departments: [ROOT, a] }), OPTS);
    expect(plan.changes.map((x) => [x.id, x.request?.body?.parent_id, x.dependsOn])).toEqual([
      ['departments:create:n', '', []],
      ['departments:move:a', { ref: 'departments:create:n' }, ['departments:create:n']],
    ]);
  });

  it('breaks a cycle it cannot avoid by moving one department to the root (always terminates)', () => {
    // X (owned) must go under U, but U (not managed) sits inside X's subtree: no order avoids the cycle.
    const warnings: PlanWarning[] = [];
    const out = orderMoves(
      [{ deptId: 'dx', thirdId: 'x', name: 'X', from: 'root', to: 'du', toLabel: '/Acme/X/U', dependsOn: [] }],
      { tenantRootId: 'root', parentOf: new Map([['dx', 'root'], ['du', 'dx']]), newParentOf: new Map() },
      warnings,
    );
    expect(out.map((c) => [c.id, c.request?.body])).toEqual([['departments:move:x:root', { parent_id: '' }]]);
    expect(warnings.map((w) => w.code)).toEqual(['move_cycle']);
  });
});
