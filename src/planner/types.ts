/** Inputs of the planner: what the mirror holds and the options of one run. */
import type { PlanValue, PlatformDepartment, PlatformPosition } from '../domain/index.js';
import type { SyncConfig, SyncPolicy } from '../config/sync.js';
import type { PlanTrustFilter } from './trust/types.js';
import type { LifecycleOptions } from './lifecycle/index.js';
import type { MemberSource } from '../domain/member-table.js';

/** The platform as the mirror last saw it, plus orgsync's own ownership records. */
export interface PlannerSnapshot {
  /** Departments (tombstones with status `deleted` are ignored). Must include the tenant root (depth 0). */
  departments: readonly PlatformDepartment[];
  /** Positions (tombstones ignored). */
  positions: readonly PlatformPosition[];
  /**
   * The platform's members and this sync's ownership records, as the member table reads them against the desired
   * members (issue 42): lists in the heap (`listMembers`), or the state DB's tables (src/mirror/member-table.ts).
   */
  members: MemberSource;
  /**
   * Third ids of creates this sync started but may not have recorded (a crash between the POST and the ownership
   * write). A live record with such a third id is this sync's own and is adopted.
   */
  pendingCreates?: { members?: ReadonlySet<string>; departments?: ReadonlySet<string>; positions?: ReadonlySet<string> };
  /**
   * Pending member creates: third_user_id -> the contact (normalise.ts `pendingContact`) they posted. A live member
   * that is not owned but carries such a third id and that e-mail or phone is this sync's crashed create: adopted
   * when still desired, removed when gone from the source.
   */
  pendingMemberContacts?: ReadonlyMap<string, string>;
  /**
   * Member creates of earlier runs that still owe their completing change (a suspended new hire whose status PATCH
   * failed): third_user_id -> the fields it sets. While the source still asks for them, the planner sends them as
   * part of that create (`Change.completes`), which a create-only policy lets through.
   */
  owedCompletions?: ReadonlyMap<string, Readonly<Record<string, PlanValue>>>;
}

/** Options of one planning. Time comes in as an argument: the planner reads no clock. */
export interface PlanOptions {
  syncId: string;
  policy: SyncPolicy;
  /** Milliseconds since the epoch (or a Date). */
  now: number | Date;
  memberRemoval: SyncConfig['member_removal'];
  /** Platform id or third_department_id of the department the source tree hangs under. */
  rootDepartment?: string;
  /** sync.adopt: what an unowned record may be adopted by, per entity (empty lists: never). */
  adopt: SyncConfig['adopt'];
  deleteThreshold: SyncConfig['delete_threshold'];
  /** `--allow-deletes N`: permits up to N removals in this run despite the threshold. */
  allowDeletes?: number;
  /**
   * Whether the state DB knows earlier runs of this sync.id (ownership, trust state or adoptions recorded). False with
   * departments or positions managed by this sync.id on the platform: the state_lost guard refuses. Undefined: not checked.
   */
  stateKnown?: boolean;
  /** Issue 18: dated lifecycle (start_date, end_date); absent: the dates are not used. */
  lifecycle?: LifecycleOptions;
  /** Issue 10: the trust filters (shrink guard, scope guard, grace period), after the policy, before the threshold. */
  trust?: PlanTrustFilter;
}

/** The planner's lifecycle options from `sync:` (one named function, so every command plans the same way). */
export function lifecycleOptionsFrom(sync: Pick<SyncConfig, 'lifecycle'>): LifecycleOptions {
  return {
    createDaysBeforeStart: sync.lifecycle.create_days_before_start,
    endAction: sync.lifecycle.end_action,
  };
}
