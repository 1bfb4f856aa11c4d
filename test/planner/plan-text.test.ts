/** The text plan a reader gets (issue 16 point 4): summary first, 50 rows per table unless --full, paths not ids. */
import { describe, expect, it } from 'vitest';
import { calculatePlan, planToJson, renderPlanText } from '../../src/planner/index.js';
import { desired, dept, member, OPTS, ROOT, snapshot } from './fixtures.js';

describe('plan --output text', () => {
  const tree = desired({
    departments: [
      { source_id: 'eng', name: 'Engineering' },
      { source_id: 'eng-be', name: 'Backend', parent_source_id: 'eng' },
    ],
    members: [{ source_id: 'u1', display_name: 'Ann Lee', email: 'ann@x.test', department_source_id: 'eng-be', status: 'active' }],
  });

  it('says where new departments and members go as paths, also under a department created in the same run', () => {
    const text = renderPlanText(calculatePlan(tree, snapshot(), OPTS));
    expect(text).toContain(`create department "Backend" under "${ROOT.path}/Engineering"`);
    expect(text).toContain(`create member "Ann Lee" <ann@x.test> in "${ROOT.path}/Engineering/Backend"`);
    expect(text).not.toMatch(/under "eng"|departments:create:/);
  });

  it('puts the summary first and again last', () => {
    const lines = renderPlanText(calculatePlan(tree, snapshot(), OPTS)).trimEnd().split('\n');
    expect(lines[0]).toBe('Plan: 3 to create, 0 to adopt, 0 to update, 0 to move, 0 to remove. (changes: positions 0, departments 2, members 1)');
    expect(lines.at(-1)).toBe(lines[0]);
  });

  it('shows at most 50 rows per entity and operation and counts the rest; full prints all', () => {
    const many = desired({ members: Array.from({ length: 120 }, (_, i) => ({ source_id: `u${i}`, display_name: `P ${i}`, email: `p${i}@x.test`, status: 'active' as const })) });
    const plan = calculatePlan(many, snapshot(), OPTS);
    const text = renderPlanText(plan);
    expect(text.split('\n').filter((l) => l.startsWith('  + '))).toHaveLength(50);
    expect(text).toContain('  ... and 70 more members to create (--full prints all)\n');
    expect(renderPlanText(plan, { full: true }).split('\n').filter((l) => l.startsWith('  + '))).toHaveLength(120);
  });

  it('a move and a member changing department read as paths, never UUIDs', () => {
    const a = dept({ id: 'd-a', name: 'A', third_department_id: 'a', path: `${ROOT.path}/A` });
    const b = dept({ id: 'd-b', name: 'B', third_department_id: 'b', path: `${ROOT.path}/B` });
    const ann = member({ account_id: 'acc-1', display_name: 'Ann', email: 'ann@x.test', third_user_id: 'u1', department_id: 'd-a' });
    const plan = calculatePlan(
      desired({
        departments: [{ source_id: 'a', name: 'A' }, { source_id: 'b', name: 'B', parent_source_id: 'a' }],
        members: [{ source_id: 'u1', display_name: 'Ann', email: 'ann@x.test', department_source_id: 'b', status: 'active' }],
      }),
      snapshot({ departments: [ROOT, a, b], members: [ann], ownedMembers: new Map([['u1', 'acc-1']]) }),
      OPTS,
    );
    const text = renderPlanText(plan);
    expect(text).toContain(`move department "B" under "${ROOT.path}/A"  [parent_id: "${ROOT.path}" -> "${ROOT.path}/A"]`);
    expect(text).toContain(`[department_id: "${ROOT.path}/A" -> "${ROOT.path}/B"]`);
    expect(text).not.toContain('d-a');
    expect(text).not.toContain('d-b');
  });

  it('--output json is unchanged: no path labels in the document', () => {
    const doc = JSON.stringify(planToJson(calculatePlan(tree, snapshot(), OPTS)));
    expect(doc).not.toContain('"paths"');
    expect(doc).toContain('"parent_id":{"ref":"departments:create:eng"}');
  });
});
