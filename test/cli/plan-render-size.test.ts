/**
 * Issue 31 point 1, the renderers alone: a plan of 200,000 changes renders as text and HTML with bounded rows (the
 * text table used to spread every change into Math.max and overflow the stack), and the JSON written in chunks is
 * byte for byte the document `JSON.stringify(planToJson(plan), null, 2)` gives.
 */
import { describe, expect, it } from 'vitest';
import { countChanges, memberCreateChange, memberCreateFields, PLAN_FORMAT_VERSION, type Change, type Plan } from '../../src/domain/index.js';
import { planJsonChunks, planTextLines, planToJson, renderPlanText, writeLines } from '../../src/planner/render.js';
import { renderPlanHtml } from '../../src/planner/report/index.js';

function planOf(changes: Change[], extra: Partial<Plan> = {}): Plan {
  return { formatVersion: PLAN_FORMAT_VERSION, syncId: 'big', policy: 'sync', createdAt: '2026-11-27T10:00:00.000Z', changes, warnings: [], withheld: [], counts: countChanges(changes), ...extra };
}

const member = (i: number): Change =>
  memberCreateChange({ id: `members:create:E${i}`, thirdId: `E${i}`, reason: 'missing on the platform', fields: memberCreateFields(`Person ${i}`, `E${i}`, { email: `p${i}@example.com` }), dependsOn: [] });

describe('renderers of a plan of 200,000 changes', () => {
  const changes: Change[] = [];
  for (let i = 0; i < 200_000; i++) changes.push(member(i));
  const plan = planOf(changes);

  it('text: 50 rows, then how many more, and where every change is', () => {
    const text = renderPlanText(plan);
    expect(text.split('\n').filter((l) => l.startsWith('  + E'))).toHaveLength(50);
    expect(text).toContain('\n  ... and 199,950 more members to create (--full prints all)\n');
    expect(text).toContain('\nNot listed above: 199,950 rows (--full prints every row; the JSON output lists every change: --output json).\n');
    // --full streams every row in chunks instead of one string.
    const chunks: string[] = [];
    writeLines(planTextLines(plan, { full: true }), (c) => chunks.push(c));
    expect(chunks.length).toBeGreaterThan(100);
    expect(chunks.join('').split('\n').filter((l) => l.startsWith('  + E'))).toHaveLength(200_000);
  });

  it('html: 200 rows per table and a line saying how many more', () => {
    const html = renderPlanHtml(plan);
    expect(html.match(/<tr class="row" data-kind="create">/g)).toHaveLength(200);
    expect(html).toContain('<p class="more" id="member-creates-more">… and 199,800 more member creates (the JSON output lists every change: <code>orgsync plan --output json</code>; <code>--full</code> lists every row here)</p>');
    expect(renderPlanHtml(plan, {}, { full: true }).match(/<tr class="row" data-kind="create">/g)).toHaveLength(200_000);
  });

  it('json in chunks is the document JSON.stringify gives, byte for byte (20,000 of the changes, 4 KB chunks)', () => {
    const part = planOf(changes.slice(0, 20_000));
    const chunks = [...planJsonChunks(part, {}, 4096)];
    expect(chunks.length).toBeGreaterThan(1000);
    expect(chunks.join('')).toBe(`${JSON.stringify(planToJson(part), null, 2)}\n`);
  });
});

describe('json in chunks, small plans', () => {
  it('equals JSON.stringify for an empty plan, a refused one with warnings and withheld changes, and tiny chunks', () => {
    const update: Change = { id: 'members:update:u2', entity: 'members', op: 'update', thirdId: 'u2', platformId: 'a2', description: 'update member', reason: 'title differs', fields: { title: 'Lead' }, before: { title: 'Dev' }, request: { method: 'PATCH', path: '/org/members/a2', body: { title: 'Lead' } }, dependsOn: [] };
    const plans = [
      planOf([]),
      planOf([member(1), update], {
        refusal: { guard: 'delete_threshold', message: 'too many', entities: { members: { removals: 3, owned: 4, maxCount: 1, maxPercent: 10 } } },
        warnings: [{ code: 'unpatchable_drift', entity: 'members', thirdId: 'u7', message: 'email differs\n"quoted"' }],
        withheld: [{ change: update, why: 'policy:create-only' }],
      }),
    ];
    for (const p of plans) {
      const expected = `${JSON.stringify(planToJson(p, { quarantine: [] }), null, 2)}\n`;
      expect([...planJsonChunks(p, { quarantine: [] })].join('')).toBe(expected);
      expect([...planJsonChunks(p, { quarantine: [] }, 1)].join('')).toBe(expected);
    }
  });
});
