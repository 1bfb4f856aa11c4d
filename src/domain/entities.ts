/**
 * The three entities of the platform's organisation, as the platform reports them
 * (the platform's tenant external API specification, "Resources and their fields").
 */
export type EntityKind = 'departments' | 'positions' | 'members';

/** All entity kinds, in dependency order (positions and departments before members). */
export const ENTITY_KINDS: readonly EntityKind[] = ['positions', 'departments', 'members'];

export type DepartmentStatus = 'active' | 'deleted';
export type MemberStatus = 'active' | 'invited' | 'suspended' | 'left';
export type PositionStatus = 'active' | 'deleted';

/** A department as the platform reports it. */
export interface PlatformDepartment {
  id: string;
  /** Empty string for the root department. */
  parent_id: string;
  name: string;
  path: string;
  depth: number;
  sort_order: number;
  third_department_id: string;
  member_count: number;
  metadata: Record<string, unknown>;
  status: DepartmentStatus;
  updated_at: string;
}

/** A member as the platform reports it. */
export interface PlatformMember {
  account_id: string;
  display_name: string;
  email: string;
  phone: string;
  third_user_id: string;
  title: string;
  /** Empty string when the member has no department. */
  department_id: string;
  status: MemberStatus;
  roles: string[];
  updated_at: string;
}

/** A position as the platform reports it. */
export interface PlatformPosition {
  id: string;
  name: string;
  description: string;
  sort_order: number;
  third_position_id: string;
  is_system: boolean;
  member_count: number;
  agent_count: number;
  metadata: Record<string, unknown>;
  status: PositionStatus;
  updated_at: string;
}

/** One page of an organisation list endpoint. */
export interface ListPage<T> {
  items: T[];
  next_cursor: string;
  has_more: boolean;
  /**
   * The platform's own time when it answered (its `Date` header, RFC 3339), when it sent one. The mirror's
   * watermarks are taken from it, never from the local clock.
   */
  server_time?: string;
}
