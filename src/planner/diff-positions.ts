/** Positions: desired x mirror x ownership -> create / adopt / update / remove (see calculate-plan.ts). */
import type { Change, DesiredPosition, PlanValue, PlatformPosition } from '../domain/index.js';
import { type DiffContext, keptBecauseQuarantined, metadataValue, NO_DEPS } from './context.js';
import { normText } from './normalise.js';
import { MANAGED_BY_KEY, positionOwnership } from './ownership.js';

/** The position changes of a plan, unordered within each list. */
export interface PositionDiff {
  upserts: Change[];
  removals: Change[];
  /** Positions this sync owns (live), for the delete threshold. */
  ownedCount: number;
}

function differing(d: DesiredPosition, p: PlatformPosition): { fields: Record<string, PlanValue>; before: Record<string, PlanValue> } {
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

/** Diffs desired positions against the mirror. */
export function diffPositions(desired: readonly DesiredPosition[], live: readonly PlatformPosition[], provided: boolean, ctx: DiffContext): PositionDiff {
  const { syncId } = ctx;
  const adoptBy = ctx.opts.adopt?.positions ?? [];
  const pending = ctx.pending.positions;
  const byThird = new Map<string, PlatformPosition>();
  const byName = new Map<string, PlatformPosition[]>();
  let ownedCount = 0;
  for (const p of live) {
    if (p.status !== 'active') continue;
    if (p.third_position_id !== '') byThird.set(p.third_position_id, p);
    const k = normText(p.name);
    const list = byName.get(k);
    if (list) list.push(p);
    else byName.set(k, [p]);
    if (positionOwnership(p, syncId) === 'owned') ownedCount += 1;
  }
  const desiredIds = new Set(desired.map((d) => d.source_id));
  const upserts: Change[] = [];
  const taken = new Set<string>();
  for (const d of desired) {
    const existing = byThird.get(d.source_id);
    if (existing) {
      taken.add(existing.id);
      const own = positionOwnership(existing, syncId);
      if (own === 'owned') {
        const { fields, before } = differing(d, existing);
        if (Object.keys(fields).length > 0) {
          upserts.push({
            id: `positions:update:${d.source_id}`,
            entity: 'positions',
            op: 'update',
            thirdId: d.source_id,
            platformId: existing.id,
            description: `update position "${existing.name}" (${Object.keys(fields).join(', ')})`,
            reason: `${Object.keys(fields).join(', ')} differ${Object.keys(fields).length === 1 ? 's' : ''} from the source`,
            fields,
            before,
            request: { method: 'PATCH', path: `/org/positions/${encodeURIComponent(existing.id)}`, body: fields },
            dependsOn: NO_DEPS,
          });
        }
        continue;
      }
      const crashed = pending?.has(d.source_id) === true && own === 'unmanaged';
      if (own === 'unmanaged' && (adoptBy.includes('third_id') || crashed)) {
        upserts.push(adoptChange(d, existing, crashed ? 'crashed_create' : 'third_id', ctx));
        continue;
      }
      ctx.warnings.push({
        code: 'not_owned_conflict',
        entity: 'positions',
        thirdId: d.source_id,
        platformId: existing.id,
        blocks: 'not_owned_conflict',
        message: `position "${existing.name}" with third_position_id ${d.source_id} exists but is ${own === 'other_sync' ? 'managed by another sync' : own === 'system' ? 'a system position' : 'not owned by this sync (enable sync.adopt.positions: [third_id] to take it over)'}; left alone`,
      });
      continue;
    }
    if (adoptBy.includes('name')) {
      const candidate = (byName.get(normText(d.name)) ?? []).find(
        (p) => !taken.has(p.id) && positionOwnership(p, syncId) === 'unmanaged' && (p.third_position_id === '' || !desiredIds.has(p.third_position_id)),
      );
      if (candidate) {
        taken.add(candidate.id);
        upserts.push(adoptChange(d, candidate, 'name', ctx));
        continue;
      }
    }
    const fields: Record<string, PlanValue> = {
      name: normText(d.name),
      third_position_id: d.source_id,
      metadata: { [MANAGED_BY_KEY]: syncId },
    };
    if (d.description !== undefined) fields.description = normText(d.description);
    if (d.sort_order !== undefined) fields.sort_order = d.sort_order;
    upserts.push({
      id: `positions:create:${d.source_id}`,
      entity: 'positions',
      op: 'create',
      thirdId: d.source_id,
      description: `create position "${fields.name as string}"`,
      reason: 'missing on the platform',
      fields,
      request: { method: 'POST', path: '/org/positions', body: fields },
      dependsOn: NO_DEPS,
    });
  }
  const removals: Change[] = [];
  if (provided) {
    for (const p of live) {
      if (p.status !== 'active' || positionOwnership(p, syncId) !== 'owned') continue;
      if (p.third_position_id !== '' && desiredIds.has(p.third_position_id)) continue;
      if (taken.has(p.id)) continue;
      if (keptBecauseQuarantined(ctx, 'positions', p.third_position_id, p.id, p.name)) continue;
      const key = p.third_position_id || p.id;
      removals.push({
        id: `positions:remove:${key}`,
        entity: 'positions',
        op: 'remove',
        thirdId: p.third_position_id,
        platformId: p.id,
        description: `delete position "${p.name}"`,
        reason: 'gone from the source',
        fields: {},
        request: { method: 'DELETE', path: `/org/positions/${encodeURIComponent(p.id)}` },
        dependsOn: NO_DEPS,
      });
    }
  }
  return { upserts, removals, ownedCount };
}

function adoptChange(d: DesiredPosition, p: PlatformPosition, by: 'third_id' | 'name' | 'crashed_create', ctx: DiffContext): Change {
  const { fields, before } = differing(d, p);
  if (p.third_position_id !== d.source_id) {
    fields.third_position_id = d.source_id;
    before.third_position_id = p.third_position_id;
  }
  fields.metadata = { ...metadataValue(p.metadata), [MANAGED_BY_KEY]: ctx.syncId };
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
