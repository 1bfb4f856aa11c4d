/** The rows of the position table: the index step, which row matches, and one handler per row. */
import type { Change, DesiredPosition, PlanValue, PlatformPosition } from '../../domain/index.js';
import { isQuarantined, metadataValue, NO_DEPS, quarantinedKeptWarning } from '../context.js';
import { normText } from '../normalise.js';
import { MANAGED_BY_KEY, positionOwnership } from '../ownership.js';
import type { PositionEnv, PositionIndex, PositionResult, PositionRow, PositionRowName } from './types.js';

/** Indexes the live positions by third id and name, and the desired ones by source id. */
export function buildPositionIndex(desired: readonly DesiredPosition[], all: readonly PlatformPosition[], syncId: string): PositionIndex {
  const live: PlatformPosition[] = [];
  const byThird = new Map<string, PlatformPosition>();
  const byName = new Map<string, PlatformPosition[]>();
  let ownedCount = 0;
  for (const p of all) {
    if (p.status !== 'active') continue;
    live.push(p);
    if (p.third_position_id !== '') byThird.set(p.third_position_id, p);
    const k = normText(p.name);
    const list = byName.get(k);
    if (list) list.push(p);
    else byName.set(k, [p]);
    if (positionOwnership(p, syncId) === 'owned') ownedCount += 1;
  }
  return { live, byThird, byName, ownedCount, desiredIds: new Set(desired.map((d) => d.source_id)) };
}

/** The first row of the table that matches a desired position (see index.ts); reads what is taken so far. */
export function classifyPosition(d: DesiredPosition, env: PositionEnv, out: Pick<PositionResult, 'taken'>): PositionRow {
  const existing = env.index.byThird.get(d.source_id);
  if (existing) {
    const own = positionOwnership(existing, env.ctx.syncId);
    if (own === 'owned') return rowOf('update_owned', d, existing, own);
    const crashed = env.ctx.pending.positions?.has(d.source_id) === true && own === 'unmanaged';
    if (own === 'unmanaged' && (env.adoptBy.includes('third_id') || crashed)) return rowOf('adopt_by_third_id', d, existing, own, crashed ? 'crashed_create' : 'third_id');
    return rowOf('conflict', d, existing, own);
  }
  if (env.adoptBy.includes('name')) {
    const candidate = (env.index.byName.get(normText(d.name)) ?? []).find(
      (p) => !out.taken.has(p.id) && positionOwnership(p, env.ctx.syncId) === 'unmanaged' && (p.third_position_id === '' || !env.index.desiredIds.has(p.third_position_id)),
    );
    if (candidate) return rowOf('adopt_by_name', d, candidate, 'unmanaged', 'name');
  }
  return rowOf('create', d);
}

/** The row of a live position once every desired one is decided: owned and absent from the source, if so. */
export function classifyAbsentPosition(p: PlatformPosition, env: PositionEnv, out: Pick<PositionResult, 'taken'>): PositionRow | undefined {
  if (positionOwnership(p, env.ctx.syncId) !== 'owned') return undefined;
  if (p.third_position_id !== '' && env.index.desiredIds.has(p.third_position_id)) return undefined;
  if (out.taken.has(p.id)) return undefined;
  return rowOf(isQuarantined(env.ctx, 'positions', p.third_position_id) ? 'kept_quarantined' : 'gone', undefined, p, 'owned');
}

function rowOf(row: PositionRowName, desired: DesiredPosition | undefined, live?: PlatformPosition, own?: PositionRow['own'], by?: PositionRow['by']): PositionRow {
  return { row, desired, live, own, by };
}

/** Same third id, owned: update the fields that differ (name, description, sort_order). */
export function updateOwned({ desired: d, live }: PositionRow, _env: PositionEnv, out: PositionResult): void {
  out.taken.add(live!.id);
  const { fields, before } = differing(d!, live!);
  const keys = Object.keys(fields);
  if (keys.length === 0) return;
  out.upserts.push({
    id: `positions:update:${d!.source_id}`,
    entity: 'positions',
    op: 'update',
    thirdId: d!.source_id,
    platformId: live!.id,
    description: `update position "${live!.name}" (${keys.join(', ')})`,
    reason: `${keys.join(', ')} differ${keys.length === 1 ? 's' : ''} from the source`,
    fields,
    before,
    request: { method: 'PATCH', path: `/org/positions/${encodeURIComponent(live!.id)}`, body: fields },
    dependsOn: NO_DEPS,
  });
}

/** Same third id (unmanaged + adopt [third_id], or this sync's crashed create) or same name (adopt [name]): adopt. */
export function adoptPosition({ desired: d, live, by }: PositionRow, env: PositionEnv, out: PositionResult): void {
  out.taken.add(live!.id);
  out.upserts.push(adoptChange(d!, live!, by!, env));
}

/** Same third id, another sync's, a system position, or unmanaged without adoption: blocked, left alone. */
export function sameIdConflict({ desired: d, live, own }: PositionRow, _env: PositionEnv, out: PositionResult): void {
  out.taken.add(live!.id);
  const whose = own === 'other_sync' ? 'managed by another sync' : own === 'system' ? 'a system position' : 'not owned by this sync (enable sync.adopt.positions: [third_id] to take it over)';
  out.warnings.push({
    code: 'not_owned_conflict',
    entity: 'positions',
    thirdId: d!.source_id,
    platformId: live!.id,
    blocks: 'not_owned_conflict',
    message: `position "${live!.name}" with third_position_id ${d!.source_id} exists but is ${whose}; left alone`,
  });
}

/** No live position with its third id and none adopted by name: create it. */
export function createPosition({ desired: d }: PositionRow, env: PositionEnv, out: PositionResult): void {
  const fields: Record<string, PlanValue> = { name: normText(d!.name), third_position_id: d!.source_id, metadata: { [MANAGED_BY_KEY]: env.ctx.syncId } };
  if (d!.description !== undefined) fields.description = normText(d!.description);
  if (d!.sort_order !== undefined) fields.sort_order = d!.sort_order;
  out.upserts.push({
    id: `positions:create:${d!.source_id}`,
    entity: 'positions',
    op: 'create',
    thirdId: d!.source_id,
    description: `create position "${fields.name as string}"`,
    reason: 'missing on the platform',
    fields,
    request: { method: 'POST', path: '/org/positions', body: fields },
    dependsOn: NO_DEPS,
  });
}

/** Owned, absent only because its source record is quarantined: kept, with a `quarantined_kept` warning. */
export function keptQuarantined({ live: p }: PositionRow, _env: PositionEnv, out: PositionResult): void {
  out.warnings.push(quarantinedKeptWarning('positions', p!.third_position_id, p!.id, p!.name));
}

/** Owned and gone from the source: deleted. */
export function gonePosition({ live: p }: PositionRow, _env: PositionEnv, out: PositionResult): void {
  out.removals.push({
    id: `positions:remove:${p!.third_position_id || p!.id}`,
    entity: 'positions',
    op: 'remove',
    thirdId: p!.third_position_id,
    platformId: p!.id,
    description: `delete position "${p!.name}"`,
    reason: 'gone from the source',
    fields: {},
    request: { method: 'DELETE', path: `/org/positions/${encodeURIComponent(p!.id)}` },
    dependsOn: NO_DEPS,
  });
}

function adoptChange(d: DesiredPosition, p: PlatformPosition, by: 'third_id' | 'name' | 'crashed_create', env: PositionEnv): Change {
  const { fields, before } = differing(d, p);
  if (p.third_position_id !== d.source_id) {
    fields.third_position_id = d.source_id;
    before.third_position_id = p.third_position_id;
  }
  fields.metadata = { ...metadataValue(p.metadata), [MANAGED_BY_KEY]: env.ctx.syncId };
  return {
    id: `positions:adopt:${d.source_id}`,
    entity: 'positions',
    op: 'adopt',
    thirdId: d.source_id,
    platformId: p.id,
    description: `adopt position "${p.name}" (matched by ${by.replace('_', ' ')})`,
    reason: by === 'crashed_create' ? 'created by this sync in a run that stopped before recording it' : `sync.adopt.positions matches by ${by}`,
    fields,
    before,
    request: { method: 'PATCH', path: `/org/positions/${encodeURIComponent(p.id)}`, body: fields },
    dependsOn: NO_DEPS,
    adoptedBy: by,
  };
}

/** The owned fields that differ: name, description, sort_order. */
export function differing(d: DesiredPosition, p: PlatformPosition): { fields: Record<string, PlanValue>; before: Record<string, PlanValue> } {
  const fields: Record<string, PlanValue> = {};
  const before: Record<string, PlanValue> = {};
  if (normText(d.name) !== normText(p.name)) {
    fields.name = normText(d.name);
    before.name = p.name;
  }
  if (d.description !== undefined && normText(d.description) !== normText(p.description)) {
    fields.description = normText(d.description);
    before.description = p.description;
  }
  if (d.sort_order !== undefined && d.sort_order !== p.sort_order) {
    fields.sort_order = d.sort_order;
    before.sort_order = p.sort_order;
  }
  return { fields, before };
}
