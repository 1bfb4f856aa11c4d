/**
 * The platform port: what the applier and the daemon need of the platform's organisation API. PlatformClient is the
 * real implementation; tests may hand in another.
 */
import type { EntityKind, ListPage, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/entities.js';

/** Query of a list page (spec "Organisation sync"). */
export interface ListParams {
  /** The `next_cursor` of the previous page. */
  cursor?: string;
  /** 1..200 (platform default 50). */
  limit?: number;
  /** RFC 3339; with it the list includes tombstones and is ordered by change. */
  updated_since?: string;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, the attempt on the wire included. */
  signal?: AbortSignal;
  /** Called right before each attempt is sent (after any pacing wait); what it throws ends the call as is, unsent. */
  beforeAttempt?(): void;
  /** Once aborted, no further attempt starts: a backoff wait ends at once and the last failure is thrown. */
  noRetry?: AbortSignal;
}

/** POST /org/departments. */
export interface CreateDepartmentBody {
  name: string;
  /** Absent or "": under the tenant's root department. */
  parent_id?: string;
  sort_order?: number;
  third_department_id?: string;
  metadata?: Record<string, unknown>;
}

/** PATCH /org/departments/{department_id}. */
export type PatchDepartmentBody = Partial<CreateDepartmentBody>;

/** POST /org/members. */
export interface CreateMemberBody {
  phone?: string;
  email?: string;
  display_name?: string;
  title?: string;
  third_user_id?: string;
  department_id?: string;
  role_code?: 'tenant.member';
}

/** PATCH /org/members/{account_id} (e-mail and phone cannot be patched). */
export interface PatchMemberBody {
  display_name?: string;
  title?: string;
  third_user_id?: string;
  /** "" clears the department. */
  department_id?: string;
  status?: 'active' | 'suspended';
}

/** POST /org/positions. */
export interface CreatePositionBody {
  name: string;
  description?: string;
  sort_order?: number;
  third_position_id?: string;
  metadata?: Record<string, unknown>;
}

/** PATCH /org/positions/{position_id}. */
export type PatchPositionBody = Partial<CreatePositionBody>;

/** The record type of each entity kind. */
export interface EntityRecords {
  departments: PlatformDepartment;
  members: PlatformMember;
  positions: PlatformPosition;
}

/** The organisation API as the sync uses it. Errors are PlatformError subclasses (./errors.ts). */
export interface OrgPlatformPort {
  /** One list page of any entity (the daemon's mirror refresh walks these). */
  listPage<K extends EntityKind>(entity: K, params: ListParams, options?: CallOptions): Promise<ListPage<EntityRecords[K]>>;

  listDepartments(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformDepartment>>;
  getDepartment(id: string, options?: CallOptions): Promise<PlatformDepartment>;
  createDepartment(body: CreateDepartmentBody, options?: CallOptions): Promise<PlatformDepartment>;
  patchDepartment(id: string, body: PatchDepartmentBody, options?: CallOptions): Promise<PlatformDepartment>;
  deleteDepartment(id: string, options?: CallOptions): Promise<void>;

  listMembers(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformMember>>;
  getMember(accountId: string, options?: CallOptions): Promise<PlatformMember>;
  createMember(body: CreateMemberBody, options?: CallOptions): Promise<PlatformMember>;
  patchMember(accountId: string, body: PatchMemberBody, options?: CallOptions): Promise<PlatformMember>;
  deleteMember(accountId: string, options?: CallOptions): Promise<void>;

  listPositions(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformPosition>>;
  getPosition(id: string, options?: CallOptions): Promise<PlatformPosition>;
  createPosition(body: CreatePositionBody, options?: CallOptions): Promise<PlatformPosition>;
  patchPosition(id: string, body: PatchPositionBody, options?: CallOptions): Promise<PlatformPosition>;
  deletePosition(id: string, options?: CallOptions): Promise<void>;
}

/** Hooks the operations layer connects to metrics. Route templates are bounded labels, never ids. */
export interface ClientObserver {
  /** Every HTTP answer (each attempt), with its duration. */
  onResponse?(method: string, routeTemplate: string, status: number, durationSeconds: number): void;
  /** A retry is about to happen. */
  onRetry?(reason: 'rate_limited' | 'server' | 'network' | 'timeout'): void;
  /** A 429 arrived (the credential's bucket is paused). */
  onRateLimited?(): void;
  /** A request waited for the token bucket this long. */
  onThrottled?(seconds: number): void;
  /** An attempt is sent with the key of this fingerprint (first 8 hex of its SHA-256; never the key). */
  onKeyRequest?(key: string): void;
  /** The key of this fingerprint got a 429. */
  onKeyRateLimited?(key: string): void;
  /** The key of this fingerprint was refused (401, or 403 with `code`) and dropped; the request goes to another key. */
  onKeyDropped?(key: string, status: number, code: string): void;
}
