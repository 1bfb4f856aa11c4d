/** The department decision table, one row handler at a time: a tiny index value, one call, the result it wrote. */
import { describe, expect, it } from 'vitest';
import type { DesiredDepartment, PlatformDepartment } from '../../src/domain/index.js';
import type { DiffContext } from '../../src/planner/context.js';
import { buildDepartmentIndex, departmentLabel, parentsFirst } from '../../src/planner/departments/department-index.js';
import { classifyDepartment } from '../../src/planner/departments/present-rows.js';
import { createDepartment, DEPARTMENT_NAME_TAKEN, nameTwin, removalCandidates } from '../../src/planner/departments/create-rows.js';
import { DEPARTMENT_ROWS } from '../../src/planner/departments/index.js';
import { type DepartmentEnv, type DepartmentResult, type DepartmentRow, newDepartmentResult } from '../../src/planner/departments/types.js';
import { calculatePlan } from '../../src/planner/index.js';
import { desired, dept, OPTS, ROOT, snapshot } from './fixtures.js';

interface Setup {
  desired?: DesiredDepartment[];
  live?: PlatformDepartment[];
  adoptBy?: string[];
  ctx?: Partial<DiffContext>;
}

function setup(s: Setup = {}): { env: DepartmentEnv; out: DepartmentResult } {
  const ctx: DiffContext = { syncId: 'hr', opts: OPTS, warnings: [], pending: {}, ...s.ctx };
  const index = buildDepartmentIndex(s.desired ?? [], [ROOT, ...(s.live ?? [])], 'hr', undefined, ctx.warnings);
  const out = newDepartmentResult(ctx.warnings);
  return { env: { ctx, index, adoptBy: s.adoptBy ?? [], label: departmentLabel(index, out) }, out };
}

const eng: DesiredDepartment = { source_id: 'eng', name: 'Engineering' };
const engLive = dept({ id: 'd1', name: 'Engineering', third_department_id: 'eng' });
const row = (r: DepartmentRow['row'], desired: DesiredDepartment, parent: string, live?: PlatformDepartment, by?: DepartmentRow['by'], own?: DepartmentRow['own']): DepartmentRow => ({ row: r, desired, parent, live, own, by });

/** The row classifyDepartment picks for one desired department against the setup. */
function rowFor(d: DesiredDepartment, s: Setup): string {
  const { env, out } = setup({ ...s, desired: [d] });
  return classifyDepartment(d, env, out).row;
}

describe('department table: which row a desired department matches (first match wins)', () => {
  it('picks each row of the table from source, mirror and ownership', () => {
    const unmanaged = { ...engLive, metadata: {} };
    expect(rowFor({ ...eng, parent_source_id: 'nowhere' }, {})).toBe('unresolved_parent');
    expect(rowFor(eng, { live: [engLive] })).toBe('update_owned');
    expect(rowFor(eng, { live: [unmanaged], adoptBy: ['third_id'] })).toBe('adopt_by_third_id');
    expect(rowFor(eng, { live: [unmanaged], ctx: { pending: { departments: new Set(['eng']) } } })).toBe('adopt_by_third_id');
    expect(rowFor(eng, { live: [unmanaged] })).toBe('conflict');
    expect(rowFor(eng, { live: [{ ...engLive, metadata: { managed_by: 'other' } }] })).toBe('conflict');
    expect(rowFor(eng, { live: [{ ...unmanaged, third_department_id: '' }], adoptBy: ['name'] })).toBe('adopt_by_name');
    expect(rowFor(eng, { live: [{ ...unmanaged, third_department_id: '' }] })).toBe('create');
    expect(rowFor(eng, {})).toBe('create');
  });

  it('orders parents first and reports a cycle in the source', () => {
    const warnings: { code: string; thirdId: string }[] = [];
    const a = { source_id: 'a', name: 'A', parent_source_id: 'b' };
    const b = { source_id: 'b', name: 'B' };
    expect(parentsFirst([a, b], new Map([['a', a], ['b', b]]), warnings as never).map((d) => d.source_id)).toEqual(['b', 'a']);
    const x = { source_id: 'x', name: 'X', parent_source_id: 'y' };
    const y = { source_id: 'y', name: 'Y', parent_source_id: 'x' };
    parentsFirst([x, y], new Map([['x', x], ['y', y]]), warnings as never);
    expect(warnings.map((w) => [w.code, w.thirdId])).toEqual([['source_cycle', 'y']]);
  });
});

describe('department table: one handler per row', () => {
  it('unresolved_parent: skipped with a warning; a child of a skipped one says so', () => {
    const { env, out } = setup();
    DEPARTMENT_ROWS.unresolved_parent(row('unresolved_parent', { ...eng, parent_source_id: 'nowhere' }, ''), env, out);
    DEPARTMENT_ROWS.unresolved_parent(row('unresolved_parent', { source_id: 'be', name: 'Backend', parent_source_id: 'eng' }, ''), env, out);
    expect(out.warnings.map((w) => w.message)).toEqual([
      'department eng ("Engineering"): parent nowhere is neither in the source nor on the platform; skipped',
      'department be ("Backend"): parent eng was skipped; skipped',
    ]);
    expect(out.resolve.size).toBe(0);
  });

  it('update_owned: renames, and moves when the parent differs', () => {
    const sales = dept({ id: 'd2', name: 'Sales', third_department_id: 'sales' });
    const { env, out } = setup({ live: [engLive, sales] });
    DEPARTMENT_ROWS.update_owned(row('update_owned', { ...eng, name: 'Eng' }, 'd2', engLive), env, out);
    expect(out.upserts.map((c) => [c.id, c.description, c.fields, c.before])).toEqual([['departments:update:eng', 'rename department "/Acme/Engineering" to "Eng"', { name: 'Eng' }, { name: 'Engineering' }]]);
    expect(out.moves).toEqual([{ deptId: 'd1', thirdId: 'eng', name: 'Engineering', from: 'root', to: 'd2', toLabel: '/Acme/Sales', dependsOn: [] }]);
    expect(out.resolve.get('eng')).toBe('d1');
  });

  it('update_owned: nothing when source and platform agree', () => {
    const { env, out } = setup({ live: [engLive] });
    DEPARTMENT_ROWS.update_owned(row('update_owned', eng, 'root', engLive), env, out);
    expect([out.upserts, out.moves]).toEqual([[], []]);
  });

  it('adopt_by_third_id: sets managed_by (keeping other metadata); a move waits for the adoption', () => {
    const unmanaged = { ...engLive, metadata: { cost_center: 'C1' } };
    const sales = dept({ id: 'd2', name: 'Sales' });
    const { env, out } = setup({ live: [unmanaged, sales], adoptBy: ['third_id'] });
    DEPARTMENT_ROWS.adopt_by_third_id(row('adopt_by_third_id', eng, 'd2', unmanaged, 'third_id'), env, out);
    const c = out.upserts[0]!;
    expect([c.id, c.op, c.adoptedBy, c.fields, c.reason]).toEqual(['departments:adopt:eng', 'adopt', 'third_id', { metadata: { cost_center: 'C1', managed_by: 'hr' } }, 'sync.adopt.departments matches by third_id']);
    expect(out.moves[0]!.dependsOn).toEqual(['departments:adopt:eng']);
  });

  it('adopt_by_third_id: a crashed create of this sync says so', () => {
    const unmanaged = { ...engLive, metadata: {} };
    const { env, out } = setup({ live: [unmanaged] });
    DEPARTMENT_ROWS.adopt_by_third_id(row('adopt_by_third_id', eng, 'root', unmanaged, 'crashed_create'), env, out);
    expect([out.upserts[0]!.description, out.upserts[0]!.reason]).toEqual(['adopt department "/Acme/Engineering" (matched by crashed create)', 'created by this sync in a run that stopped before recording it']);
  });

  it('conflict: blocked and left alone, but its children still resolve to it', () => {
    const other = { ...engLive, metadata: { managed_by: 'other' } };
    const { env, out } = setup({ live: [other] });
    DEPARTMENT_ROWS.conflict(row('conflict', eng, 'root', other, undefined, 'other_sync'), env, out);
    expect(out.warnings).toEqual([{ code: 'not_owned_conflict', entity: 'departments', thirdId: 'eng', platformId: 'd1', blocks: 'not_owned_conflict', message: 'department "/Acme/Engineering" with third_department_id eng exists but is managed by another sync; left alone' }]);
    expect(out.resolve.get('eng')).toBe('d1');
    expect(out.upserts).toEqual([]);
  });

  it('adopt_by_name: sets the third id and managed_by', () => {
    const byName = dept({ id: 'd7', name: 'Engineering', metadata: {} });
    const { env, out } = setup({ live: [byName], adoptBy: ['name'] });
    DEPARTMENT_ROWS.adopt_by_name(row('adopt_by_name', eng, 'root', byName, 'name'), env, out);
    const c = out.upserts[0]!;
    expect([c.id, c.adoptedBy, c.fields, c.before, c.description]).toEqual([
      'departments:adopt:eng', 'name', { third_department_id: 'eng', metadata: { managed_by: 'hr' } }, { third_department_id: '' }, 'adopt department "/Acme/Engineering" (matched by name under the same parent)',
    ]);
    expect([...out.taken]).toEqual(['d7']);
  });

  it('create: posts under the parent, resolves to the create, and gives children its path', () => {
    const { env, out } = setup();
    createDepartment(row('create', { ...eng, sort_order: 3 }, 'root'), env, out);
    createDepartment(row('create', { source_id: 'be', name: 'Backend' }, '@departments:create:eng'), env, out);
    expect(out.creates.map((c) => [c.id, c.description, c.fields, c.dependsOn])).toEqual([
      ['departments:create:eng', 'create department "Engineering" under "/Acme"', { name: 'Engineering', parent_id: '', third_department_id: 'eng', metadata: { managed_by: 'hr' }, sort_order: 3 }, []],
      ['departments:create:be', 'create department "Backend" under "/Acme/Engineering"', { name: 'Backend', parent_id: { ref: 'departments:create:eng' }, third_department_id: 'be', metadata: { managed_by: 'hr' } }, ['departments:create:eng']],
    ]);
    expect(out.resolve.get('be')).toBe('@departments:create:be');
    expect(out.newParentOf.get('@departments:create:be')).toBe('@departments:create:eng');
    expect(out.warnings).toEqual([]);
  });

  it('removal candidates: owned and absent; a quarantined one is kept with a warning; not owned ones are not', () => {
    const gone = dept({ id: 'd3', name: 'Gone', third_department_id: 'gone' });
    const held = dept({ id: 'd4', name: 'Held', third_department_id: 'held' });
    const hand = dept({ id: 'd5', name: 'Hand', metadata: {} });
    const { env, out } = setup({ desired: [eng], live: [engLive, gone, held, hand], ctx: { held: { departments: new Set(['held']), members: new Set(), positions: new Set() } } });
    expect(removalCandidates(env.index, env, out).map((d) => d.id)).toEqual(['d3']);
    expect(out.warnings.map((w) => [w.code, w.thirdId])).toEqual([['quarantined_kept', 'held']]);
  });
});

describe('department table: a create beside a department of the same name that is not this sync\'s', () => {
  it('warns department_name_taken for another sync\'s department, naming its id, its owner and the ways out', () => {
    const theirs = dept({ id: 'd9', name: 'Engineering', third_department_id: 'ENG', metadata: { managed_by: 'payroll' } });
    const { env, out } = setup({ live: [theirs] });
    createDepartment(row('create', { ...eng, name: ' Engineering ' }, 'root'), env, out);
    expect(out.creates.map((c) => c.id)).toEqual(['departments:create:eng']);
    expect(out.warnings).toEqual([
      {
        code: DEPARTMENT_NAME_TAKEN,
        entity: 'departments',
        thirdId: 'eng',
        platformId: 'd9',
        message:
          'department eng ("Engineering") would be created under "/Acme" beside department d9 ("/Acme/Engineering") of the same name, owned by sync payroll; to have one department, ' +
          'adopt it (sync.adopt.departments: [name], once sync payroll has released it with `orgsync release`), rename it in the source, or scope this sync under a department of its own (sync.root_department)',
      },
    ]);
    expect(out.warnings[0]!.blocks).toBeUndefined();
  });

  it('says "owned by no sync" for an unmanaged one, and that adopting by name takes it', () => {
    const hand = dept({ id: 'd8', name: 'Engineering', metadata: {} });
    const { env, out } = setup({ live: [hand] });
    createDepartment(row('create', eng, 'root'), env, out);
    expect(out.warnings.map((w) => w.message)).toEqual([
      'department eng ("Engineering") would be created under "/Acme" beside department d8 ("/Acme/Engineering") of the same name, owned by no sync; to have one department, ' +
        'adopt it (sync.adopt.departments: [name]), rename it in the source, or scope this sync under a department of its own (sync.root_department)',
    ]);
  });

  it('finds no twin under another parent, under a parent created in this run, of this sync, or claimed by a source id', () => {
    const sales = dept({ id: 'd2', name: 'Sales', metadata: {} });
    const underSales = dept({ id: 'd6', name: 'Engineering', parent_id: 'd2', path: '/Acme/Sales/Engineering', depth: 2, metadata: {} });
    const ours = dept({ id: 'd1', name: 'Engineering', third_department_id: 'old' });
    const claimed = dept({ id: 'd5', name: 'Engineering', third_department_id: 'eng2', metadata: {} });
    const { env, out } = setup({ desired: [eng, { source_id: 'eng2', name: 'Eng 2' }], live: [sales, underSales, ours, claimed] });
    expect(nameTwin(eng, 'root', env, out)).toBeUndefined();
    expect(nameTwin(eng, '@departments:create:x', env, out)).toBeUndefined();
    expect(nameTwin(eng, 'd2', env, out)?.id).toBe('d6');
    out.taken.add('d6');
    expect(nameTwin(eng, 'd2', env, out)).toBeUndefined();
  });
});

describe('calculatePlan: department_name_taken', () => {
  const theirs = dept({ id: 'd9', name: 'Engineering', third_department_id: 'ENG', metadata: { managed_by: 'payroll' } });
  const hand = dept({ id: 'd8', name: 'Sales', metadata: {} });
  const source = desired({ departments: [eng, { source_id: 'sales', name: 'Sales' }, { source_id: 'be', name: 'Backend', parent_source_id: 'eng' }] });

  it('warns once per create beside another sync\'s or nobody\'s department, without blocking or changing the changes', () => {
    const plan = calculatePlan(source, snapshot({ departments: [ROOT, theirs, hand] }), OPTS);
    expect(plan.changes.map((c) => c.id)).toEqual(['departments:create:eng', 'departments:create:sales', 'departments:create:be']);
    expect(plan.warnings.map((w) => [w.code, w.thirdId, w.platformId, w.blocks])).toEqual([
      ['department_name_taken', 'eng', 'd9', undefined],
      ['department_name_taken', 'sales', 'd8', undefined],
    ]);
    expect(plan.refusal).toBeUndefined();
  });

  it('adopting by name takes nobody\'s department: no create, no warning; another sync\'s is still warned about', () => {
    const plan = calculatePlan(source, snapshot({ departments: [ROOT, theirs, hand] }), { ...OPTS, adopt: { ...OPTS.adopt, departments: ['name'] } });
    expect(plan.changes.map((c) => c.id)).toEqual(['departments:create:eng', 'departments:create:be', 'departments:adopt:sales']);
    expect(plan.warnings.map((w) => [w.code, w.thirdId])).toEqual([['department_name_taken', 'eng']]);
  });

  it('a sync scoped under its own department (sync.root_department) creates beside nothing: no warning', () => {
    const mine = dept({ id: 'd7', name: 'HR', third_department_id: 'HR-ROOT', metadata: {} });
    const plan = calculatePlan(source, snapshot({ departments: [ROOT, theirs, hand, mine] }), { ...OPTS, rootDepartment: 'HR-ROOT' });
    expect(plan.warnings).toEqual([]);
  });
});
