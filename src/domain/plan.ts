/**
 * The Plan: a serialisable value computed by the planner and read by every consumer (text and JSON renderings,
 * the saved-plan file, the applier). Each change describes itself: its kind, key, a human description, the fields
 * it sets, the request it becomes and the changes it waits for.
 */
import type { EntityKind } from './entities.js';

/** The plan file format version; bumped on any incompatible change to the JSON shape. */
export const PLAN_FORMAT_VERSION = 1;

/**
 * What a change does.
 * - `create`: POST a new record (or re-activate a member who left).
 * - `adopt`: take over an existing unowned record (logged) and patch what differs.
 * - `update`: PATCH the fields that differ (never empty).
 * - `move`: PATCH a department's parent_id (ordered so that no intermediate tree has a cycle).
 * - `remove`: DELETE (departments, positions, members with member_removal `left`) or PATCH status suspended.
 */
export type ChangeOp = 'create' | 'adopt' | 'update' | 'move' | 'remove';

/** All change operations, in the order summaries list them. */
export const CHANGE_OPS: readonly ChangeOp[] = ['create', 'adopt', 'update', 'move', 'remove'];

/** A value in a request body that is only known once another change of the same run has created its record. */
export interface PlanRef {
  /** The id of the change whose created record's platform id goes here. */
  ref: string;
}

/** A JSON value, possibly holding a PlanRef. */
export type PlanValue = string | number | boolean | null | PlanRef | PlanValue[] | { [key: string]: PlanValue };

/** The HTTP request a change becomes (path relative to /api/external/v1; `{ref}` ids are resolved at apply time). */
export interface PlanRequest {
  method: 'POST' | 'PATCH' | 'DELETE';
  /** e.g. `/org/departments`, `/org/members/<account_id>`; a PlanRef id is written as `{ref:<change id>}`. */
  path: string;
  body?: Record<string, PlanValue>;
}

/** One change of a plan. */
/**
 * One short line for a change, external-dns style: `CREATE member E1002 "Lars Okafor" in /Acme/Sales`
 * (`UPDATE department eng "Engineering"`, `MOVE department eng-db "Databases" under /Acme/Engineering`);
 * `personName` false: `CREATE member E1002 in /Acme/Sales`.
 */
export function changeLine(c: Change, personName = true): string {
  const kind = c.entity === 'departments' ? 'department' : c.entity === 'positions' ? 'position' : 'member';
  // A member's name is personal data (issue 29): without personName the line names the person by source id only.
  const name = kind === 'member' && !personName ? undefined : (c.fields.display_name ?? c.fields.name ?? /"([^"]*)"/.exec(c.description)?.[1]);
  const where = c.paths?.department_id?.after !== undefined ? ` in ${c.paths.department_id.after}` : c.paths?.parent_id?.after !== undefined ? ` under ${c.paths.parent_id.after}` : '';
  return `${c.op.toUpperCase()} ${kind} ${c.thirdId || c.platformId || ''}${typeof name === 'string' ? ` "${name}"` : ''}${where}`;
}

export interface Change {
  /** Unique within the plan and stable across plans of the same inputs: `<entity>:<op>:<third id>[:<n>]`. */
  id: string;
  entity: EntityKind;
  op: ChangeOp;
  /** The record's third_*_id (the source id); the key ownership and diffs use. */
  thirdId: string;
  /** The platform id (department/position id or member account_id) when the record exists already. */
  platformId?: string;
  /** One human sentence, e.g. `rename department "Sales" to "Sales EMEA"`. */
  description: string;
  /** Why the planner chose this change (e.g. `missing on the platform`, `name differs`, `gone from the source`). */
  reason: string;
  /** The fields this change sets, after normalisation (empty for DELETE). */
  fields: Record<string, PlanValue>;
  /** For updates: the platform's current values of the fields it sets. */
  before?: Record<string, PlanValue>;
  /** The request it becomes; absent only for an adoption that changes no field (an ownership record, no write). */
  request?: PlanRequest;
  /** Ids of the changes that must succeed first. */
  dependsOn: string[];
  /**
   * The id of the create this change completes: what the create must carry but its request cannot (POST /org/members
   * takes no status, so a new member who is suspended in the source gets a PATCH right after it). A policy judges it
   * as part of that create, so `create-only` never leaves a suspended new hire active.
   */
  completes?: string;
  /**
   * Department paths (`/Acme/Sales`) of the id fields this change sets (`parent_id`, `department_id`), for text
   * renderings: the request carries ids, a reader wants paths. Not part of the JSON plan.
   */
  paths?: Record<string, { before?: string; after: string }>;
  /** Adoption only: what matched (`third_id`, `name`, `email`, `phone`, `crashed_create`). */
  adoptedBy?: 'third_id' | 'name' | 'email' | 'phone' | 'crashed_create';
}

/** What a member create is made of (see memberCreateChange). */
export interface MemberCreateInit {
  id: string;
  thirdId: string;
  /** A re-hire: the account this sync owned before the member left (POST re-activates it). */
  platformId?: string | undefined;
  reason: string;
  /** The body of the POST, after normalisation. */
  fields: Record<string, PlanValue>;
  dependsOn: string[];
  /** The path of the department it is created in (shared by every create into that department). */
  paths?: Change['paths'] | undefined;
}

function memberCreateDescription(this: Change): string {
  const f = this.fields;
  const label = this.paths?.department_id?.after;
  return `${this.platformId !== undefined ? 're-add' : 'create'} member "${f.display_name as string}"${f.email ? ` <${f.email as string}>` : ''}${label !== undefined ? ` in "${label}"` : ''}`;
}

function memberCreateRequest(this: Change): PlanRequest {
  return { method: 'POST', path: '/org/members', body: this.fields };
}

function memberCreateId(this: Change): string {
  return `members:create:${this.thirdId}`;
}

const DERIVED_DESCRIPTION: PropertyDescriptor = { get: memberCreateDescription, enumerable: true, configurable: true };
const DERIVED_REQUEST: PropertyDescriptor = { get: memberCreateRequest, enumerable: true, configurable: true };
/** The id of a create is `members:create:<third id>`: derived, not held (a million creates held a million ids). */
const DERIVED_ID: PropertyDescriptor = { get: memberCreateId, enumerable: true, configurable: true };
/** entity and op are the same for every member create: read from the shared descriptor, no slot per change. */
const MEMBERS_ENTITY: PropertyDescriptor = { get: () => 'members', enumerable: true, configurable: true };
const CREATE_OP: PropertyDescriptor = { get: () => 'create', enumerable: true, configurable: true };

/**
 * The accessors every member create shares, for a planner that builds creates of its own compact shape: defined in
 * this order (`id`, `entity`, `op`, then `description` after `thirdId` and `platformId`, `request` after `fields`),
 * they make the change read exactly as a memberCreateChange.
 */
export const MEMBER_CREATE_ACCESSORS = { id: DERIVED_ID, entity: MEMBERS_ENTITY, op: CREATE_OP, description: DERIVED_DESCRIPTION, request: DERIVED_REQUEST } as const;

/**
 * A member create in its compact form (issue 19). An initial import is almost only member creates (100,000 of
 * them, or a million in a large tenant), so each carries only what it is made of: its source id, the fields it
 * posts, what it waits for and its department's path; its `id`, `entity`, `op`, `description` and `request` are
 * derived from those when read (issue 31). All are own enumerable accessors, so the change is still a plain value
 * to every reader: JSON (`plan --out`, `--json`, approvals' digests), spreads and comparisons see exactly the
 * properties, in the order, of any other change. Objects built the same way share one hidden class, so the
 * accessors cost nothing per change.
 */
export function memberCreateChange(init: MemberCreateInit): Change {
  return new MemberCreate(init);
}

/**
 * Builds a member create. A constructor rather than a literal plus assignments: V8 then sizes the object to its
 * properties at once (no separate property array, a third smaller). Its prototype is Object.prototype, so it is a
 * plain object to every reader (`constructor === Object`).
 */
const MemberCreate = function (this: Change, init: MemberCreateInit) {
  // An id of another shape (none is made so) is held as given.
  if (init.id === `members:create:${init.thirdId}`) Object.defineProperty(this, 'id', DERIVED_ID);
  else this.id = init.id;
  Object.defineProperty(this, 'entity', MEMBERS_ENTITY);
  Object.defineProperty(this, 'op', CREATE_OP);
  this.thirdId = init.thirdId;
  if (init.platformId !== undefined) this.platformId = init.platformId;
  Object.defineProperty(this, 'description', DERIVED_DESCRIPTION);
  if (init.paths !== undefined) this.paths = init.paths;
  this.reason = init.reason;
  this.fields = init.fields;
  Object.defineProperty(this, 'request', DERIVED_REQUEST);
  this.dependsOn = init.dependsOn;
} as unknown as new (init: MemberCreateInit) => Change;
MemberCreate.prototype = Object.prototype;

/** The optional fields of a member create's body (undefined: not set). */
export interface MemberCreateOptionalFields {
  email?: string | undefined;
  phone?: string | undefined;
  title?: string | undefined;
  department_id?: string | PlanRef | undefined;
}

/**
 * The body of a member create (`display_name`, `third_user_id`, then those of `optional` that are set, in that
 * order), sized at once like the change itself.
 */
export function memberCreateFields(displayName: string, thirdUserId: string, optional: MemberCreateOptionalFields): Record<string, PlanValue> {
  return new MemberCreateFields(displayName, thirdUserId, optional);
}

const MemberCreateFields = function (this: Record<string, PlanValue>, displayName: string, thirdUserId: string, o: MemberCreateOptionalFields) {
  this.display_name = displayName;
  this.third_user_id = thirdUserId;
  if (o.email !== undefined) this.email = o.email;
  if (o.phone !== undefined) this.phone = o.phone;
  if (o.title !== undefined) this.title = o.title;
  if (o.department_id !== undefined) this.department_id = o.department_id;
} as unknown as new (displayName: string, thirdUserId: string, o: MemberCreateOptionalFields) => Record<string, PlanValue>;
MemberCreateFields.prototype = Object.prototype;

/** A finding that is not a write: unpatchable drift, conflicts with records orgsync does not own, kept departments. */
export interface PlanWarning {
  /** Stable code: `unpatchable_drift`, `not_owned_conflict`, `kept_not_empty`, `unresolved_parent`, `empty_source`, `department_name_taken`, `invalid_phone_dropped` (from the sources). */
  code: string;
  entity: EntityKind;
  thirdId: string;
  platformId?: string;
  message: string;
  /**
   * Set when the warning means a source record the plan cannot create or update (issue 15): it is listed as blocked
   * in the summaries, counted in orgsync_blocked_records, and the platform is not in sync while it lasts.
   */
  blocks?: BlockedReason;
}

/** Why a source record is blocked (the `reason` label of orgsync_blocked_records). */
export type BlockedReason =
  /** A record with its third id exists and is not owned by this sync (made by hand, or another sync's). */
  | 'not_owned_conflict'
  /** An owned member's e-mail or phone differs from the source; the platform cannot patch them. */
  | 'unpatchable_drift'
  /** A new member's e-mail or phone belongs to an account this sync does not own; not created. */
  | 'contact_not_owned';

/** Every blocked reason, in the order summaries list them. */
export const BLOCKED_REASONS: readonly BlockedReason[] = ['not_owned_conflict', 'unpatchable_drift', 'contact_not_owned'];

/** A source record the plan can neither create nor update. */
export interface BlockedRecord {
  entity: EntityKind;
  /** The source id (third id). */
  sourceId: string;
  /** The platform record in the way, when there is one. */
  platformId?: string;
  reason: BlockedReason;
  message: string;
}

/** The blocked source records of a plan, from its warnings (one per record: the first reason found wins). */
export function blockedRecords(plan: Pick<Plan, 'warnings'>): BlockedRecord[] {
  const seen = new Set<string>();
  const out: BlockedRecord[] = [];
  for (const w of plan.warnings) {
    if (!w.blocks || seen.has(`${w.entity}:${w.thirdId}`)) continue;
    seen.add(`${w.entity}:${w.thirdId}`);
    out.push({ entity: w.entity, sourceId: w.thirdId, ...(w.platformId ? { platformId: w.platformId } : {}), reason: w.blocks, message: w.message });
  }
  return out;
}

/** A change the planner computed but held back: by the policy, or (issue 10) by a grace period. */
export interface WithheldChange {
  change: Change;
  /** `policy:<name>`, `grace`, ... */
  why: string;
  /** Grace periods: when the removal becomes due (RFC 3339). */
  dueAt?: string;
}

/** A guard that refused the plan (nothing is applied). */
export interface PlanRefusal {
  /** `delete_threshold`, later `source_shrink`, `scope_change`. */
  guard: string;
  message: string;
  /** Per entity: removals planned and the limit they exceeded. */
  entities?: Partial<Record<EntityKind, { removals: number; owned: number; maxCount: number; maxPercent: number }>>;
}

/** Counts of changes per entity and operation. */
export type PlanCounts = Record<EntityKind, Record<ChangeOp, number>>;

/** The result of planning one run. */
/** What a lifecycle rule (issue 18: start_date, end_date) did to one member in a plan. */
export interface LifecycleEvent {
  /** scheduled: a start ahead; ended: an end date passed; ending: an end date ahead (issue 45). */
  rule: 'scheduled' | 'ended' | 'ending';
  thirdId: string;
  displayName: string;
  /** The date as the source gave it. */
  date: string;
  /** Its instant (RFC 3339). */
  at: string;
  /** scheduled: when the member will be created (RFC 3339). */
  createOn?: string;
  /** ended: remove, suspend, or not_created (a leaver never created); ending: what happens on the day. */
  action?: 'remove' | 'suspend' | 'not_created';
}

export interface Plan {
  formatVersion: typeof PLAN_FORMAT_VERSION;
  syncId: string;
  policy: string;
  /** When it was computed (RFC 3339), from the injected clock. */
  createdAt: string;
  /** Changes in execution order (the applier may run independent ones in parallel). */
  changes: Change[];
  warnings: PlanWarning[];
  withheld: WithheldChange[];
  /** Set when a guard refused the plan. */
  refusal?: PlanRefusal;
  counts: PlanCounts;
  /** Issue 10 (saved plans): hashes of the inputs it was computed from. */
  inputs?: { mirrorHash?: string; sourceHash?: string };
  /** Issue 18: members the lifecycle rules held back (scheduled) or took out (ended). Absent when none. */
  lifecycle?: { scheduled: LifecycleEvent[]; ended: LifecycleEvent[]; ending?: LifecycleEvent[] };
}

/** True when the plan holds at least one write. */
export function hasChanges(plan: Pick<Plan, 'changes'>): boolean {
  return plan.changes.length > 0;
}

/** Counts `changes` per entity and operation (every entity and op present, zero when none). */
export function countChanges(changes: readonly Change[]): PlanCounts {
  const zero = (): Record<ChangeOp, number> => ({ create: 0, adopt: 0, update: 0, move: 0, remove: 0 });
  const counts: PlanCounts = { positions: zero(), departments: zero(), members: zero() };
  for (const c of changes) counts[c.entity][c.op] += 1;
  return counts;
}

/** True when `v` is a PlanRef. */
export function isPlanRef(v: unknown): v is PlanRef {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { ref?: unknown }).ref === 'string' && Object.keys(v).length === 1;
}
