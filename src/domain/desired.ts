/**
 * The normalised desired state that every source connector yields (HR truth).
 * Source ids become the platform's third_department_id, third_position_id and third_user_id.
 */
import type { EntityKind } from './entities.js';

/** Where a record came from, for quarantine reports and `orgsync explain`. */
export interface RecordOrigin {
  /** The source's name in the config. */
  source: string;
  /** file:line, a DN, or a JSON path. */
  location: string;
  /** For merged records: which source each field's value came from. */
  fieldSources?: Record<string, string>;
}

export interface DesiredDepartment {
  source_id: string;
  name: string;
  /** Absent or empty: top level (under the sync root). */
  parent_source_id?: string;
  sort_order?: number;
  origin?: RecordOrigin;
}

export interface DesiredPosition {
  source_id: string;
  name: string;
  description?: string;
  sort_order?: number;
  origin?: RecordOrigin;
}

export type DesiredMemberStatus = 'active' | 'suspended' | 'left';

export interface DesiredMember {
  source_id: string;
  display_name: string;
  /** Lower-cased. */
  email?: string;
  /** E.164. */
  phone?: string;
  title?: string;
  department_source_id?: string;
  status: DesiredMemberStatus;
  /** The first working day as the source gave it, and its instant (ms; a date is its midnight in `timezone:`). */
  start_date?: string;
  start_at?: number;
  /** The last day as the source gave it, and the instant from which the member is gone (ms). */
  end_date?: string;
  end_at?: number;
  origin?: RecordOrigin;
}

/** A record set aside with a reason a person can act on. */
export interface QuarantineEntry {
  source: string;
  entity: EntityKind;
  /** The record's source id, when it has one. */
  source_id?: string;
  /** file:line, DN or JSON path. */
  location: string;
  /** A short stable reason code, e.g. `duplicate_id`, `unknown_parent`, `invalid_email`. */
  reason: string;
  /** The human sentence. */
  message: string;
}

/**
 * A value a source gave that orgsync dropped while keeping the record (issue 15: an invalid phone beside a valid
 * e-mail, under `phone_policy: drop`). Reported by `sources check`, counted in plan and run summaries.
 */
export interface SourceWarning {
  source: string;
  entity: EntityKind;
  source_id: string;
  /** file:line, DN or JSON path. */
  location: string;
  /** A short stable code, e.g. `invalid_phone_dropped`. */
  code: string;
  /** The human sentence. */
  message: string;
  /** What was wrong with the dropped value, e.g. `invalid phone "12345"`. */
  problem: string;
}

/** The merged, validated desired state of one run. */
export interface DesiredState {
  departments: DesiredDepartment[];
  positions: DesiredPosition[];
  members: DesiredMember[];
  quarantine: QuarantineEntry[];
  /** Values dropped from records that were kept (absent: none). */
  warnings?: SourceWarning[];
  /** Per entity: true when at least one configured source provides that entity (an unprovided entity is never diffed for removals). */
  provided: Record<EntityKind, boolean>;
  /** Records each source left out by its include/exclude rules (absent: none), so plans account for them (issue 32). */
  excluded?: ({ source: string } & Record<EntityKind, number>)[];
}
