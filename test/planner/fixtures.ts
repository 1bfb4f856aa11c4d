/** Builders of platform records and desired states for planner unit tests. */
import { memberList, type DesiredMember, type DesiredState, type PlatformDepartment, type PlatformMember, type PlatformPosition } from '../../src/domain/index.js';
import { listMembers, type PlannerSnapshot, type PlanOptions } from '../../src/planner/index.js';

export const ROOT: PlatformDepartment = dept({ id: 'root', parent_id: '', name: 'Acme', path: '/Acme', depth: 0, third_department_id: '', metadata: {} });

export function dept(p: Partial<PlatformDepartment> & { id: string; name: string }): PlatformDepartment {
  return {
    parent_id: 'root',
    path: `/Acme/${p.name}`,
    depth: 1,
    sort_order: 0,
    third_department_id: '',
    member_count: 0,
    metadata: { managed_by: 'hr' },
    status: 'active',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...p,
  };
}

export function member(p: Partial<PlatformMember> & { account_id: string; display_name: string }): PlatformMember {
  return { email: '', phone: '', third_user_id: '', title: '', department_id: '', status: 'active', roles: ['tenant.member'], updated_at: '2026-01-01T00:00:00.000Z', ...p };
}

export function position(p: Partial<PlatformPosition> & { id: string; name: string }): PlatformPosition {
  return {
    description: '',
    sort_order: 0,
    third_position_id: '',
    is_system: false,
    member_count: 0,
    agent_count: 0,
    metadata: { managed_by: 'hr' },
    status: 'active',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...p,
  };
}

/** A desired state from lists (members as a list: memberList). */
export type DesiredLists = Omit<Partial<DesiredState>, 'members'> & { members?: readonly DesiredMember[] };

export function desired(p: DesiredLists = {}): DesiredState {
  const { members = [], ...rest } = p;
  return {
    departments: [],
    positions: [],
    quarantine: [],
    provided: { departments: true, positions: true, members: true },
    ...rest,
    members: memberList(members),
  };
}

/** A snapshot from lists: the platform's members and this sync's ownership records (members/list-table.ts). */
export type SnapshotLists = Omit<Partial<PlannerSnapshot>, 'members'> & { members?: readonly PlatformMember[]; ownedMembers?: ReadonlyMap<string, string> };

export function snapshot(p: SnapshotLists = {}): PlannerSnapshot {
  const { members = [], ownedMembers = new Map(), ...rest } = p;
  return { departments: [ROOT], positions: [], ...rest, members: listMembers(members, ownedMembers) };
}

/** sync.adopt with every list empty (the schema's default): nothing unowned is adopted. */
export const NO_ADOPTION: PlanOptions['adopt'] = { members: [], departments: [], positions: [] };

export const OPTS = { syncId: 'hr', policy: 'sync' as const, memberRemoval: 'left' as const, now: Date.UTC(2026, 10, 22), deleteThreshold: { max_count: 500, max_percent: 100 }, adopt: NO_ADOPTION };
