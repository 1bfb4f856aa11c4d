/** The position decision table, one row handler at a time: a tiny index value, one call, the result it wrote. */
import { describe, expect, it } from 'vitest';
import type { DesiredPosition, PlatformPosition } from '../../src/domain/index.js';
import type { DiffContext } from '../../src/planner/context.js';
import { POSITION_ROWS } from '../../src/planner/positions/index.js';
import { buildPositionIndex, classifyAbsentPosition, classifyPosition } from '../../src/planner/positions/rows.js';
import { newPositionResult, type PositionEnv, type PositionResult, type PositionRow } from '../../src/planner/positions/types.js';
import { OPTS, position } from './fixtures.js';

interface Setup {
  desired?: DesiredPosition[];
  live?: PlatformPosition[];
  adoptBy?: string[];
  ctx?: Partial<DiffContext>;
}

function setup(s: Setup = {}): { env: PositionEnv; out: PositionResult } {
  const ctx: DiffContext = { syncId: 'hr', opts: OPTS, warnings: [], pending: {}, ...s.ctx };
  return { env: { ctx, index: buildPositionIndex(s.desired ?? [], s.live ?? [], 'hr'), adoptBy: s.adoptBy ?? [] }, out: newPositionResult(ctx.warnings) };
}

const dev: DesiredPosition = { source_id: 'p1', name: 'Developer' };
const devLive = position({ id: 'q1', name: 'Developer', third_position_id: 'p1' });
const row = (r: PositionRow['row'], desired: DesiredPosition | undefined, live?: PlatformPosition, by?: PositionRow['by'], own?: PositionRow['own']): PositionRow => ({ row: r, desired, live, own, by });

function rowFor(d: DesiredPosition, s: Setup): string {
  const { env, out } = setup({ ...s, desired: [d] });
  return classifyPosition(d, env, out).row;
}

describe('position table: which row matches (first match wins)', () => {
  it('picks each row for a desired position', () => {
    const unmanaged = { ...devLive, metadata: {} };
    expect(rowFor(dev, { live: [devLive] })).toBe('update_owned');
    expect(rowFor(dev, { live: [unmanaged], adoptBy: ['third_id'] })).toBe('adopt_by_third_id');
    expect(rowFor(dev, { live: [unmanaged], ctx: { pending: { positions: new Set(['p1']) } } })).toBe('adopt_by_third_id');
    expect(rowFor(dev, { live: [unmanaged] })).toBe('conflict');
    expect(rowFor(dev, { live: [{ ...unmanaged, is_system: true }], adoptBy: ['third_id'] })).toBe('conflict');
    expect(rowFor(dev, { live: [{ ...unmanaged, third_position_id: '' }], adoptBy: ['name'] })).toBe('adopt_by_name');
    expect(rowFor(dev, { live: [{ ...unmanaged, third_position_id: '' }] })).toBe('create');
  });

  it('picks the absent rows for live owned positions no desired one claimed', () => {
    const gone = position({ id: 'q2', name: 'Gone', third_position_id: 'p2' });
    const hand = position({ id: 'q3', name: 'Hand', metadata: {} });
    const { env, out } = setup({ desired: [dev], live: [devLive, gone, hand], ctx: { held: { positions: new Set(['p2']), members: new Set(), departments: new Set() } } });
    expect([devLive, gone, hand].map((p) => classifyAbsentPosition(p, env, out)?.row)).toEqual([undefined, 'kept_quarantined', undefined]);
    const plain = setup({ live: [gone] });
    expect(classifyAbsentPosition(gone, plain.env, plain.out)?.row).toBe('gone');
  });
});

describe('position table: one handler per row', () => {
  it('update_owned: patches what differs, nothing when both agree', () => {
    const { env, out } = setup({ live: [devLive] });
    POSITION_ROWS.update_owned(row('update_owned', { ...dev, description: 'Writes code', sort_order: 2 }, devLive), env, out);
    POSITION_ROWS.update_owned(row('update_owned', dev, devLive), env, out);
    expect(out.upserts.map((c) => [c.id, c.fields, c.before, c.reason])).toEqual([['positions:update:p1', { description: 'Writes code', sort_order: 2 }, { description: '', sort_order: 0 }, 'description, sort_order differ from the source']]);
  });

  it('adopt_by_third_id and adopt_by_name: set managed_by (and the third id when matched by name)', () => {
    const byName = position({ id: 'q5', name: 'Developer', metadata: {} });
    const { env, out } = setup({ live: [byName] });
    POSITION_ROWS.adopt_by_name(row('adopt_by_name', dev, byName, 'name'), env, out);
    POSITION_ROWS.adopt_by_third_id(row('adopt_by_third_id', { source_id: 'p9', name: 'Lead' }, position({ id: 'q9', name: 'Lead', third_position_id: 'p9', metadata: {} }), 'crashed_create'), env, out);
    expect(out.upserts.map((c) => [c.id, c.adoptedBy, c.fields, c.reason])).toEqual([
      ['positions:adopt:p1', 'name', { third_position_id: 'p1', metadata: { managed_by: 'hr' } }, 'sync.adopt.positions matches by name'],
      ['positions:adopt:p9', 'crashed_create', { metadata: { managed_by: 'hr' } }, 'created by this sync in a run that stopped before recording it'],
    ]);
    expect([...out.taken]).toEqual(['q5', 'q9']);
  });

  it('conflict: names whose the position is, blocked, left alone', () => {
    const { env, out } = setup();
    POSITION_ROWS.conflict(row('conflict', dev, { ...devLive, is_system: true }, undefined, 'system'), env, out);
    POSITION_ROWS.conflict(row('conflict', dev, { ...devLive, metadata: {} }, undefined, 'unmanaged'), env, out);
    expect(out.warnings.map((w) => [w.blocks, w.message])).toEqual([
      ['not_owned_conflict', 'position "Developer" with third_position_id p1 exists but is a system position; left alone'],
      ['not_owned_conflict', 'position "Developer" with third_position_id p1 exists but is not owned by this sync (enable sync.adopt.positions: [third_id] to take it over); left alone'],
    ]);
  });

  it('create: posts the position with managed_by', () => {
    const { env, out } = setup();
    POSITION_ROWS.create(row('create', { ...dev, description: ' Writes code ' }), env, out);
    expect(out.upserts.map((c) => [c.id, c.fields, c.request?.path])).toEqual([['positions:create:p1', { name: 'Developer', third_position_id: 'p1', metadata: { managed_by: 'hr' }, description: 'Writes code' }, '/org/positions']]);
  });

  it('gone: deleted; kept_quarantined: kept with a warning', () => {
    const gone = position({ id: 'q2', name: 'Gone', third_position_id: 'p2' });
    const { env, out } = setup({ live: [gone] });
    POSITION_ROWS.gone(row('gone', undefined, gone), env, out);
    POSITION_ROWS.kept_quarantined(row('kept_quarantined', undefined, gone), env, out);
    expect(out.removals.map((c) => [c.id, c.request])).toEqual([['positions:remove:p2', { method: 'DELETE', path: '/org/positions/q2' }]]);
    expect(out.warnings.map((w) => w.message)).toEqual(['positions p2 ("Gone") is quarantined in the source; kept on the platform, not removed']);
  });
});
