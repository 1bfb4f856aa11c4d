/**
 * The applier: executes a Plan through the platform port with bounded concurrency under the client's pacing.
 * Each result updates the mirror (and, for members, the ownership records) from the response at once.
 * The executor is chosen through the ONE dry-run seam (./seam.ts): `step` is either the real one or the dry one.
 *
 * 409 handling:
 * - create collision on a third id: refresh that entity, find the record by third id; this sync's own (managed_by,
 *   or a member carrying this third id: a create that crashed before it was recorded) is taken and patched where it
 *   differs; anything else is reported as a conflict and left alone.
 * - member_exists: refresh members, find the member by phone or e-mail; adopt it when it is this sync's crashed create
 *   or `sync.adopt.members` allows the match, else report.
 * - department_cycle on a move (the tree changed since the plan): deferred; the caller refreshes and re-plans, and the
 *   planner orders the moves against the current tree, through the root when no order avoids a cycle.
 * - department_has_children / department_has_members on a delete: deferred; the caller refreshes and re-plans.
 * - 403 member_is_admin on a member removal: skipped, warned and counted.
 */
import type { SyncConfig } from '../config/sync.js';
import type { Change, ChangeOp, EntityKind, PlanValue, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/index.js';
import { CHANGE_OPS, isPlanRef } from '../domain/index.js';
import { stateDbFault } from '../mirror/db-faults.js';
import type { Mirror } from '../mirror/mirror.js';
import type { OwnershipStore } from '../mirror/ownership.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { describePlatformError, isPlatformError, type PlatformError } from '../platform/errors.js';
import type { OrgPlatformPort } from '../platform/port.js';
import { MANAGED_BY_KEY, normEmail, normPhone, normText, pendingContact } from '../planner/index.js';
import type { Clock } from '../shared/clock.js';
import { oneLine } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { runTasksIndexed } from './executor.js';
import { throughSeam } from './seam.js';
import { fencedPort } from './fenced-port.js';
import { appliedChangeLine, isReleaseChange, type ReleaseChange } from './release.js';
import { ApplyStop, isWriteRefused, type StopReason, type WriteGate } from './stop.js';
import { WriteBatcher } from './write-batcher.js';

export { ApplyStop, WriteRefused, isWriteRefused, type StopReason, type WriteGate } from './stop.js';
export { appliedChangeLine, isReleaseChange, type ReleaseChange } from './release.js';

/** Stop reason: a write was answered 403 scope_denied (the credential lacks a scope; no further write can succeed). */
export const SCOPE_DENIED = 'scope_denied';
/** Stop reason: a write was answered 401 (the platform rejects the credential). */
export const CREDENTIAL_REFUSED = 'credential_refused';
/** Stop reasons that will not go away by themselves: the run fails and /readyz reports not ready until a run succeeds. */
export const CREDENTIAL_STOPS: ReadonlySet<string> = new Set([SCOPE_DENIED, CREDENTIAL_REFUSED]);

/** How one change ended. */
export type ChangeStatus =
  /** Written (or, in a dry run, would have been). */
  | 'applied'
  /** Its create collided with this sync's own record (or an adoptable one), which was taken over instead. */
  | 'adopted'
  /** Failed for good (after the client's retries). */
  | 'failed'
  /** A record not owned by this sync stands in the way; left alone. */
  | 'conflict'
  /** The platform changed under the plan (409 children/members, 404 on a patch): re-plan. */
  | 'deferred'
  /** Not attempted: a change it depends on did not succeed. */
  | 'skipped'
  /** A tenant.admin member cannot be removed (403). */
  | 'skipped_admin'
  /** Not started: the apply stopped (shutdown, lost lease, unrecordable write: see `stopReason`), or too many changes failed. */
  | 'not_started';

/** The outcome of one change. */
export interface ChangeResult {
  change: Change;
  status: ChangeStatus;
  message?: string;
  /** The platform id the change wrote (the created record's, for creates). */
  platformId?: string;
}

/** What the applier needs. */
export interface ApplierDeps {
  client: OrgPlatformPort;
  mirror: Mirror;
  ownership: OwnershipStore;
  logger: Logger;
  clock: Clock;
  syncId: string;
  adopt: SyncConfig['adopt'];
  /** Incremental refresh of the mirror for these entities (used to find the record behind a 409). */
  refresh(entities: readonly EntityKind[]): Promise<void>;
  /** The missing-run counts a release forgets (./release.ts); only `orgsync release` applies releases. */
  trust?: Pick<TrustStateStore, 'forgetMissing'>;
}

/** Options of one apply. */
export interface ApplyOptions {
  /** Writes in flight at once (platform.concurrency). */
  concurrency: number;
  /** Stop starting changes after this many failed (sync.max_failures). */
  maxFailures: number;
  /** The one dry-run switch: changes are described, nothing is written (not to the platform, mirror or ownership). */
  dryRun?: boolean;
  /** Once aborted no new change (nor retry) starts; those in flight finish and are recorded. */
  signal?: AbortSignal;
  /** Aborts the requests in flight (the end of the shutdown timeout); their changes count as failed. */
  abort?: AbortSignal;
  /** Checked right before every write attempt (see ./stop.ts): the first to refuse stops the apply. */
  gates?: readonly WriteGate[];
  /** Called once per finished change (progress, metrics, the record history), as it finishes. */
  onResult?(result: ChangeResult): void;
  /**
   * Which results `ApplyResult.results` keeps: every change's (`all`, the default), or only those that did not
   * succeed (`unsuccessful`: applied and adopted changes are counted and reported to onResult, not kept), so an
   * apply of 100,000 changes holds no result per change (issue 19).
   */
  keep?: 'all' | 'unsuccessful';
}

/** Counts of results per entity, operation and status. */
export type ApplyCounts = Record<EntityKind, Record<ChangeOp, number>>;

/** The outcome of one apply. */
export interface ApplyResult {
  /** In plan order: every change's result, or (`keep: 'unsuccessful'`) those of the changes that did not succeed. */
  results: ChangeResult[];
  /** Applied (or adopted) changes per entity and operation. */
  applied: ApplyCounts;
  byStatus: Record<ChangeStatus, number>;
  /** True when the apply stopped early (see `stopReason`). */
  stopped: boolean;
  /** Why the apply stopped starting writes, when it did. */
  stopReason?: StopReason;
  /**
   * keep `unsuccessful`: the changes left unstarted when the apply stopped (or reached sync.max_failures), by plan
   * position, and why; they are not in `results` (a stopped apply of a million changes holds no million results).
   * Absent when there were none, and with keep `all` (they are in `results`).
   */
  notStarted?: { positions: ArrayLike<number>; message: string };
}

const emptyCounts = (): ApplyCounts => {
  const zero = () => Object.fromEntries(CHANGE_OPS.map((op) => [op, 0])) as Record<ChangeOp, number>;
  return { positions: zero(), departments: zero(), members: zero() };
};

/** The log line of a finished change (one function, so what a change line carries is decided in one place). */
export function logChangeResult(log: Logger, r: ChangeResult, dryRun: boolean): void {
  const c = r.change;
  const platformId = r.platformId ?? c.platformId;
  // One plain object literal per line, never `{ ...fields, ... }`: at thousands of changes a second V8 allocated
  // the spread copies in the old generation, where they (and the strings they hold) stayed as garbage until a full
  // GC, the largest share of an initial sync's peak memory (issue 19).
  // `line`: the change in one short line by ids (`CREATE member E1002 in /Acme/Sales`); `detail` with the person's
  // name, which the logger keeps only for a terminal or with log.personal_data (issue 29).
  if (r.status === 'applied' || r.status === 'adopted') {
    // A dry run wrote nothing: its line says so (status dry_run), never that the change was applied.
    if (dryRun) log.info({ change: c.id, entity: c.entity, op: c.op, third_id: c.thirdId, platform_id: platformId, status: 'dry_run', dry_run: true, line: appliedChangeLine(c, false), detail: appliedChangeLine(c) }, 'would apply');
    else log.info({ change: c.id, entity: c.entity, op: c.op, third_id: c.thirdId, platform_id: platformId, status: r.status, dry_run: false, line: appliedChangeLine(c, false), detail: appliedChangeLine(c) }, 'change applied');
  } else if (r.status === 'skipped_admin') log.warn({ change: c.id, entity: c.entity, op: c.op, third_id: c.thirdId, platform_id: platformId, status: r.status }, 'member holds tenant.admin: not removed');
  else if (r.status === 'deferred') log.info({ change: c.id, entity: c.entity, op: c.op, third_id: c.thirdId, platform_id: platformId, status: r.status, reason: r.message }, 'change deferred to a re-plan');
  else if (r.status !== 'skipped') log.warn({ change: c.id, entity: c.entity, op: c.op, third_id: c.thirdId, platform_id: platformId, status: r.status, error: r.message }, 'change not applied');
}

/** The member creates whose pending note can go: how many, and each one's third id (no iterator object per create). */
interface SettledCreates {
  readonly size: number;
  forEach(fn: (thirdId: string) => void): void;
}

/**
 * The counts of an apply as results arrive; keeps only the results asked for (with their plan position). What it
 * keeps per change at the end of a stopped apply, where a million may be left unstarted, is sized once (a growing
 * array leaves its outgrown copies in the large-object space until a full collection).
 */
class Tally {
  readonly finished: Uint8Array;
  private finishedCount = 0;
  /**
   * The kept results and their plan positions, side by side (not one pair object per result: a stopped apply of a
   * million changes keeps a million not-started results).
   */
  private readonly keptAt: number[] = [];
  private readonly kept: ChangeResult[] = [];
  /** keep `unsuccessful`: the positions of the changes left unstarted at the end, kept without their results. */
  private unstarted = new Uint32Array(0);
  private unstartedCount = 0;
  /** Positions of member creates whose pending note can go (certainly not sent, or answered with a conflict). */
  private readonly settledAt: number[] = [];
  readonly applied = emptyCounts();
  readonly byStatus: Record<ChangeStatus, number> = { applied: 0, adopted: 0, failed: 0, conflict: 0, deferred: 0, skipped: 0, skipped_admin: 0, not_started: 0 };

  constructor(
    private readonly changes: readonly Change[],
    private readonly keepAll: boolean,
  ) {
    this.finished = new Uint8Array(changes.length);
  }

  add(r: ChangeResult, i: number): void {
    this.finished[i] = 1;
    this.finishedCount += 1;
    this.byStatus[r.status] += 1;
    const c = r.change;
    const ok = r.status === 'applied' || r.status === 'adopted';
    if (ok) this.applied[c.entity][c.op] += 1;
    if (this.keepAll || !ok) {
      this.keptAt.push(i);
      this.kept.push(r);
    }
    if (isMemberCreate(c) && (r.status === 'skipped' || r.status === 'not_started' || r.status === 'conflict')) this.settledAt.push(i);
  }

  /** A change left unstarted at the end of the apply: its result kept (keep all), or only its position. */
  addUnstarted(r: ChangeResult, i: number): void {
    if (this.keepAll) return this.add(r, i);
    // Sized once, for every change not finished yet: the rest are all left unstarted or unrecorded.
    if (this.unstarted.length === 0) this.unstarted = new Uint32Array(this.finished.length - this.finishedCount);
    this.finished[i] = 1;
    this.finishedCount += 1;
    this.byStatus.not_started += 1;
    this.unstarted[this.unstartedCount++] = i;
  }

  /** The positions of the changes left unstarted (keep `unsuccessful`). */
  leftUnstarted(): Uint32Array {
    return this.unstarted.subarray(0, this.unstartedCount);
  }

  /** The member creates whose pending note can go: settled during the apply, and those left unstarted. */
  settledCreates(): SettledCreates {
    const { changes, settledAt } = this;
    const left = this.leftUnstarted();
    // Indexed loops: a for-of over a million positions allocates a million iterator results.
    let size = settledAt.length;
    for (let k = 0; k < left.length; k++) if (isMemberCreate(changes[left[k]!]!)) size += 1;
    return {
      size,
      forEach(fn) {
        for (let k = 0; k < settledAt.length; k++) fn(changes[settledAt[k]!]!.thirdId);
        for (let k = 0; k < left.length; k++) {
          const c = changes[left[k]!]!;
          if (isMemberCreate(c)) fn(c.thirdId);
        }
      },
    };
  }

  /** The kept results in plan order (as kept when they came in order, as they mostly do). */
  results(): ChangeResult[] {
    const at = this.keptAt;
    let ordered = true;
    for (let k = 1; k < at.length && ordered; k++) ordered = at[k - 1]! < at[k]!;
    if (ordered) return this.kept;
    const order = Array.from(at.keys()).sort((a, b) => at[a]! - at[b]!);
    return order.map((k) => this.kept[k]!);
  }
}

const isMemberCreate = (c: Change): boolean => c.entity === 'members' && c.op === 'create';

/**
 * The step context of an apply: the fenced port, the created ids, the serial refresh, and the state-DB writes,
 * group-committed (see write-batcher.ts); `durable` waits for the commit, `record` does not. A write whose result
 * cannot be recorded (the DB locked past its busy timeout, damaged, full) stops the apply at once: what it creates
 * would be unowned, so no further write may start.
 */
function stepContext(changes: readonly Change[], deps: ApplierDeps, options: ApplyOptions, stop: ApplyStop): { ctx: StepContext; batcher: WriteBatcher } {
  // Platform ids of created records, kept only for the changes something refers to (PlanRefs always come with a
  // dependsOn entry), so 100,000 member creates do not keep 100,000 ids.
  const referenced = new Set<string>();
  for (const c of changes) for (const d of c.dependsOn) referenced.add(d);
  let refreshing: Promise<void> = Promise.resolve();
  const refreshSerial = (entities: readonly EntityKind[]): Promise<void> => {
    refreshing = refreshing.then(
      () => deps.refresh(entities),
      () => deps.refresh(entities),
    );
    return refreshing;
  };
  const unrecordable = (err: unknown): void => {
    // A cause the gates know (a lost lease: the new holder is writing the DB) is the one to report.
    try {
      if (stop.checkGates()) return;
    } catch {
      // a gate that cannot be checked does not hide the write that could not be recorded
    }
    const path = deps.ownership.dbPath;
    const fault = stateDbFault(err, path, { doing: 'could not record a write', busyTimeoutMs: deps.ownership.busyTimeoutMs });
    const message = fault?.message ?? `could not record a write in state DB ${path}: ${oneLine(err)}`;
    if (!stop.reason) deps.logger.error({ state_db: path, error: oneLine(err) }, 'could not record a write in the state DB: no further write starts');
    stop.stop({ kind: 'state_unrecordable', message });
  };
  const batcher = new WriteBatcher((fn) => deps.ownership.inTransaction(fn));
  const client = fencedPort(deps.client, { beforeAttempt: () => stop.assertMayWrite(), noRetry: stop.signal, ...(options.abort ? { signal: options.abort } : {}) });
  const ctx: StepContext = {
    deps,
    client,
    stop,
    created: new KeptIds(referenced),
    refresh: refreshSerial,
    now: () => new Date(deps.clock.now()).toISOString(),
    durable: (fn) =>
      batcher.write(fn).catch((err: unknown) => {
        unrecordable(err);
        throw err;
      }),
    record: (fn) => {
      batcher.write(fn, { lazy: true }).catch(unrecordable);
    },
    flush: () => batcher.flush(),
    owes: owedByCreates(changes),
  };
  return { ctx, batcher };
}

/** Why the changes that never started did not (a stop, a shutdown, or sync.max_failures). */
function notStartedWhy(stop: ApplyStop, options: ApplyOptions): string {
  if (stop.reason && stop.reason.kind !== 'shutdown') return `not started: ${stop.reason.message}`;
  if (options.signal?.aborted === true) return 'not started: the run was asked to stop';
  return `not started: ${options.maxFailures} changes failed (sync.max_failures)`;
}

/** Executes `changes` (in plan order; independent ones in parallel) and reports every change's outcome. */
export async function applyChanges(changes: readonly Change[], deps: ApplierDeps, options: ApplyOptions): Promise<ApplyResult> {
  const tally = new Tally(changes, options.keep !== 'unsuccessful');
  const dryRun = options.dryRun === true;
  // One stop for every stop condition (./stop.ts): the shutdown signal is one of them.
  const stop = new ApplyStop(options.gates);
  const onShutdown = (): void => stop.stop({ kind: 'shutdown', message: 'stopped by a shutdown signal' });
  if (options.signal?.aborted) onShutdown();
  else options.signal?.addEventListener('abort', onShutdown, { once: true });
  const { ctx, batcher } = stepContext(changes, deps, options, stop);
  // THE dry-run seam.
  const executor = throughSeam(dryRun, () => realExecutor, dryRunExecutor);
  try {
    await executor.before(changes, ctx);
  } catch (err) {
    // Unrecordable: the apply is stopped and starts nothing (every change counts as not started).
    if (!stop.reason) throw err;
  }
  const finish = (r: ChangeResult, i: number): void => {
    tally.add(r, i);
    logChangeResult(deps.logger, r, dryRun);
    options.onResult?.(r);
  };
  const status = await runTasksIndexed(changes, {
    concurrency: options.concurrency,
    maxFailures: options.maxFailures,
    signal: stop.signal,
    run: async (c, i) => {
      let r: ChangeResult;
      try {
        r = await executor.step(c, ctx);
      } catch (err) {
        r = isWriteRefused(err) ? { change: c, status: 'not_started', message: err.message } : { change: c, status: 'failed', message: oneLine(err) };
      }
      finish(r, i);
      return r.status === 'applied' || r.status === 'adopted';
    },
    onSkip: (c, cause, i) => finish({ change: c, status: 'skipped', message: `depends on ${cause}, which did not succeed` }, i),
  });
  const why = notStartedWhy(stop, options);
  for (let i = 0; i < changes.length; i++) {
    if (tally.finished[i]) continue;
    const c = changes[i]!;
    const unstarted = status.at(i) === 'not_started';
    const r: ChangeResult = unstarted ? { change: c, status: 'not_started', message: why } : { change: c, status: 'failed', message: 'not recorded' };
    if (unstarted) tally.addUnstarted(r, i);
    else tally.add(r, i);
    // Counted (metrics, progress) like every other outcome, but not logged one by one: there may be thousands.
    options.onResult?.(r);
  }
  options.signal?.removeEventListener('abort', onShutdown);
  await executor.after(tally.settledCreates(), ctx);
  await batcher.flush();
  const reason = stop.reason;
  const left = tally.leftUnstarted();
  const notStarted = left.length > 0 ? { notStarted: { positions: left, message: why } } : {};
  return { results: tally.results(), applied: tally.applied, byStatus: tally.byStatus, stopped: reason !== undefined, ...(reason ? { stopReason: reason } : {}), ...notStarted };
}

/** Change id -> platform id of the record it created (or took over), for the ids in `keep` only. */
class KeptIds {
  private readonly ids = new Map<string, string>();
  constructor(private readonly keep: ReadonlySet<string>) {}
  set(changeId: string, platformId: string): void {
    if (this.keep.has(changeId)) this.ids.set(changeId, platformId);
  }
  get(changeId: string): string | undefined {
    return this.ids.get(changeId);
  }
}

interface StepContext {
  deps: ApplierDeps;
  /** The platform port with the apply's stop and abort on every call. */
  client: OrgPlatformPort;
  /** The apply's stop (./stop.ts). */
  stop: ApplyStop;
  /** Change id -> platform id of the record it created (or took over), for changes others refer to. */
  created: KeptIds;
  refresh(entities: readonly EntityKind[]): Promise<void>;
  now(): string;
  /** Queues a state-DB write and waits until it is committed. */
  durable(fn: () => void): Promise<void>;
  /** Queues a state-DB write (committed with the next group). */
  record(fn: () => void): void;
  /** Commits every queued write. */
  flush(): Promise<void>;
  /**
   * Member creates of this apply that a later change completes (a suspended new hire's status): create id -> the
   * fields that change sets. A create that succeeds owes them until that change succeeds too (ownership.ts 050).
   */
  owes: ReadonlyMap<string, Record<string, PlanValue>>;
}

type Step = (c: Change, ctx: StepContext) => Promise<ChangeResult>;

/** How changes are executed: the real way or the dry way (the one seam). */
interface Executor {
  /** Before the first change. */
  before(changes: readonly Change[], ctx: StepContext): Promise<void>;
  step: Step;
  /** After the last change, with the third ids of the member creates certainly not sent or answered with a conflict. */
  after(settledCreates: SettledCreates, ctx: StepContext): Promise<void>;
}

/** Resolves PlanRefs in a request body to the platform ids created earlier in the run. */
function resolveBody(body: Record<string, PlanValue> | undefined, created: KeptIds): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body ?? {})) {
    if (isPlanRef(v)) {
      const id = created.get(v.ref);
      if (id === undefined) throw new Error(`${k}: the change ${v.ref} it depends on has not created its record`);
      out[k] = id;
    } else out[k] = v;
  }
  return out;
}

/** The platform id a PATCH/DELETE targets (the last path segment, or a `{ref:<id>}`). */
function targetId(c: Change, created: KeptIds): string {
  const path = c.request?.path ?? '';
  const m = /\{ref:([^}]+)\}$/.exec(path);
  if (m) {
    const id = created.get(m[1]!);
    if (id === undefined) throw new Error(`the change ${m[1]!} it depends on has not created its record`);
    return id;
  }
  if (c.platformId) return c.platformId;
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

/** Create id -> the fields of the change that completes it, for the member creates some change completes. */
function owedByCreates(changes: readonly Change[]): Map<string, Record<string, PlanValue>> {
  const out = new Map<string, Record<string, PlanValue>>();
  for (const c of changes) if (c.completes !== undefined && c.entity === 'members') out.set(c.completes, c.fields);
  return out;
}

/** The dry step: describes, writes nothing. */
const dryRunStep: Step = async (c, ctx) => {
  const id = c.op === 'create' ? `dry-run:${c.id}` : (c.platformId ?? `dry-run:${c.id}`);
  ctx.created.set(c.id, id);
  return { change: c, status: 'applied', platformId: id };
};

/**
 * Dry steps between two turns of the event loop. A dry step settles at once, so without a turn a million of them
 * would run as one chain of promise jobs: no signal handled, no timer, and none of the full collections a large
 * run asks for (pipeline/collect.ts), so a dry run of a million changes peaked 100 MB higher than it needs.
 */
const DRY_STEPS_PER_TURN = 1000;
/**
 * Member creates are noted as pending in ONE transaction before any is sent, so that a crash between a POST's
 * answer and its ownership record is recognised next run (the record carries this third id and was pending).
 * After the apply, the notes of creates that were certainly not sent (skipped, not started) or answered
 * (conflict) are dropped; a failed one stays, since a create whose answer was lost may have happened.
 */
const realExecutor: Executor = {
  async before(changes, ctx) {
    const creates = changes.filter((c) => c.entity === 'members' && c.op === 'create');
    if (creates.length === 0) return;
    const at = ctx.now();
    await ctx.durable(() => {
      for (const c of creates) {
        const f = c.fields;
        ctx.deps.ownership.beginCreate('members', c.thirdId, at, pendingContact(typeof f.email === 'string' ? f.email : '', typeof f.phone === 'string' ? f.phone : ''));
      }
    });
  },
  step: (c, ctx) => realStep(c, ctx),
  async after(settled, ctx) {
    if (settled.size === 0) return;
    ctx.record(() => settled.forEach((thirdId) => ctx.deps.ownership.endCreate('members', thirdId)));
  },
};

/** The dry way: nothing is noted, nothing is written; the event loop turns every DRY_STEPS_PER_TURN steps. */
function dryRunExecutor(): Executor {
  let steps = 0;
  return {
    before: async () => undefined,
    step: async (c, ctx) => {
      if (++steps % DRY_STEPS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      return dryRunStep(c, ctx);
    },
    after: async () => undefined,
  };
}

/** A create: POST, the record into the mirror (a member also into the ownership store, with what it still owes). */
async function createStep(c: Change, ctx: StepContext, body: Record<string, unknown>): Promise<ChangeResult> {
  const { deps, created, client } = ctx;
  const { mirror, ownership } = deps;
  if (c.entity === 'departments') {
    const rec = await client.createDepartment(body as never);
    ctx.record(() => mirror.recordOutcome({ entity: 'departments', record: rec }));
    created.set(c.id, rec.id);
    return { change: c, status: 'applied', platformId: rec.id };
  }
  if (c.entity === 'positions') {
    const rec = await client.createPosition(body as never);
    ctx.record(() => mirror.recordOutcome({ entity: 'positions', record: rec }));
    created.set(c.id, rec.id);
    return { change: c, status: 'applied', platformId: rec.id };
  }
  const rec = await client.createMember(body as never);
  const owed = ctx.owes.get(c.id);
  ctx.record(() => {
    mirror.recordOutcome({ entity: 'members', record: rec });
    ownership.recordOwnedMember(c.thirdId, rec.account_id, 'created', ctx.now());
    if (owed) ownership.oweCompletion(c.thirdId, owed, ctx.now());
  });
  created.set(c.id, rec.account_id);
  return { change: c, status: 'applied', platformId: rec.account_id };
}

/** An adoption that changes no field: only the ownership record. */
function ownershipOnlyStep(c: Change, ctx: StepContext): ChangeResult {
  const { ownership } = ctx.deps;
  const account = c.platformId;
  if (c.entity === 'members' && account) {
    ctx.record(() => {
      ownership.recordOwnedMember(c.thirdId, account, 'adopted', ctx.now());
      ownership.logAdoption({ at: ctx.now(), entity: 'members', thirdId: c.thirdId, platformId: account, matchedBy: c.adoptedBy ?? 'config', detail: c.reason });
    });
  }
  ctx.created.set(c.id, c.platformId ?? '');
  return { change: c, status: c.op === 'adopt' ? 'adopted' : 'applied', ...(c.platformId ? { platformId: c.platformId } : {}) };
}

/** A DELETE (a record already gone counts as done), then out of the mirror. */
async function deleteStep(c: Change, ctx: StepContext, id: string): Promise<ChangeResult> {
  const { client } = ctx;
  const { mirror, ownership } = ctx.deps;
  try {
    if (c.entity === 'departments') await client.deleteDepartment(id);
    else if (c.entity === 'positions') await client.deletePosition(id);
    else await client.deleteMember(id);
  } catch (err) {
    // Already gone: the goal of the delete holds.
    if (!isPlatformError(err, 'not_found')) throw err;
  }
  ctx.record(() => {
    mirror.recordOutcome({ entity: c.entity, removedId: id });
    // A removed crashed create no longer needs its note.
    if (c.entity === 'members' && c.thirdId) ownership.endCreate('members', c.thirdId);
  });
  return { change: c, status: 'applied', platformId: id };
}

/** A PATCH (an update, a move, an adoption with fields), recorded in the mirror and, for members, the ownership store. */
async function patchStep(c: Change, ctx: StepContext, id: string, body: Record<string, unknown>): Promise<ChangeResult> {
  const { client } = ctx;
  const { mirror, ownership } = ctx.deps;
  if (c.entity === 'departments') {
    const rec = await client.patchDepartment(id, body);
    ctx.record(() => mirror.recordOutcome({ entity: 'departments', record: rec }));
  } else if (c.entity === 'positions') {
    const rec = await client.patchPosition(id, body);
    ctx.record(() => mirror.recordOutcome({ entity: 'positions', record: rec }));
  } else {
    const rec = await client.patchMember(id, body as never);
    const rekey = typeof body.third_user_id === 'string' ? body.third_user_id : undefined;
    ctx.record(() => {
      mirror.recordOutcome({ entity: 'members', record: rec });
      if (c.op === 'adopt') ownership.recordOwnedMember(c.thirdId, id, 'adopted', ctx.now());
      else if (rekey !== undefined) ownership.recordOwnedMember(rekey, id, 'created', ctx.now());
      if (c.completes !== undefined) ownership.settleCompletion(c.thirdId);
    });
  }
  if (c.op === 'adopt') {
    ctx.record(() => ownership.logAdoption({ at: ctx.now(), entity: c.entity, thirdId: c.thirdId, platformId: id, matchedBy: c.adoptedBy ?? 'config', detail: c.reason }));
  }
  ctx.created.set(c.id, id);
  return { change: c, status: c.op === 'adopt' ? 'adopted' : 'applied', platformId: id };
}

/**
 * A release (./release.ts): departments and positions PATCHed to metadata without managed_by first; then the member's
 * ownership record deleted and the record's missing-run count forgotten.
 */
async function releaseStep(c: ReleaseChange, ctx: StepContext, body: Record<string, unknown>): Promise<ChangeResult> {
  const trust = ctx.deps.trust;
  if (!trust) throw new Error(`${c.id}: a release needs the trust state (ApplierDeps.trust)`);
  const platformId = c.request ? (await patchStep(c, ctx, targetId(c, ctx.created), body)).platformId : c.platformId;
  ctx.record(() => {
    if (c.entity === 'members') ctx.deps.ownership.releaseMember(c.thirdId);
    trust.forgetMissing(c.entity, c.thirdId || (platformId ?? ''));
  });
  return { change: c, status: 'applied', ...(platformId !== undefined ? { platformId } : {}) };
}

/** The real step: one change against the platform, recorded in the mirror and the ownership store. */
const realStep: Step = async (c, ctx) => {
  const body = resolveBody(c.request?.body, ctx.created);
  try {
    if (c.op === 'create') return await createStep(c, ctx, body);
    if (isReleaseChange(c)) return await releaseStep(c, ctx, body);
    if (!c.request) return ownershipOnlyStep(c, ctx);
    const id = targetId(c, ctx.created);
    if (c.request.method === 'DELETE') return await deleteStep(c, ctx, id);
    return await patchStep(c, ctx, id, body);
  } catch (err) {
    if (!isPlatformError(err)) throw err;
    return onPlatformError(c, err, body, ctx);
  }
};

async function onPlatformError(c: Change, err: PlatformError, body: Record<string, unknown>, ctx: StepContext): Promise<ChangeResult> {
  const { deps } = ctx;
  // The platform refuses the credential itself (401, or 403 scope_denied): every other write would be refused the
  // same way, so the apply stops starting writes (issue 15) and the run fails, naming the missing scope.
  if (err.kind === 'unauthorized' || err.kind === 'scope_denied') {
    const message = describePlatformError(err);
    ctx.stop.stop({ kind: err.kind === 'unauthorized' ? CREDENTIAL_REFUSED : SCOPE_DENIED, message });
    return { change: c, status: 'failed', message };
  }
  if (err.kind === 'conflict' && c.op === 'create') return onCreateConflict(c, err, body, ctx);
  if (err.kind === 'conflict' && (err.code === 'department_has_children' || err.code === 'department_has_members')) {
    return { change: c, status: 'deferred', message: `${err.code}: the department is not empty yet` };
  }
  if (err.kind === 'conflict' && err.code === 'department_cycle') {
    deps.logger.warn({ change: c.id, code: err.code }, 'move rejected as a cycle: the tree changed since the plan');
    return { change: c, status: 'deferred', message: `${err.code}: the tree changed since the plan` };
  }
  if (err.kind === 'not_found' && c.request?.method === 'PATCH') {
    return { change: c, status: 'deferred', message: 'the record is gone from the platform' };
  }
  if (err.kind === 'forbidden' && err.code === 'member_is_admin') {
    return { change: c, status: 'skipped_admin', message: 'the member holds tenant.admin and cannot be removed' };
  }
  if (err.kind === 'conflict' && err.code === 'third_id_conflict') {
    deps.logger.warn({ change: c.id, code: err.code }, 'third id taken by another record');
    return { change: c, status: 'conflict', message: err.message };
  }
  return { change: c, status: 'failed', message: err.message };
}

async function onCreateConflict(c: Change, err: PlatformError, body: Record<string, unknown>, ctx: StepContext): Promise<ChangeResult> {
  const { deps, created, client } = ctx;
  const { mirror, ownership, syncId } = deps;
  await ctx.flush();
  await ctx.refresh([c.entity]);
  if (c.entity === 'departments' || c.entity === 'positions') {
    const rec = mirror.byThirdId(c.entity, c.thirdId) as PlatformDepartment | PlatformPosition | undefined;
    const live = rec && rec.status === 'active' ? rec : undefined;
    if (!live) return { change: c, status: 'deferred', message: `${err.code}: no live record with third id ${c.thirdId} after a refresh` };
    if (live.metadata?.[MANAGED_BY_KEY] !== syncId) {
      return { change: c, status: 'conflict', message: `a ${c.entity === 'departments' ? 'department' : 'position'} with third id ${c.thirdId} exists and is not owned by this sync; left alone` };
    }
    // This sync's own: a create that crashed before its answer was recorded. Take it and patch what differs.
    const patch: Record<string, unknown> = {};
    for (const k of ['name', 'description', 'sort_order'] as const) {
      if (k in body && normText(String(body[k])) !== normText(String((live as unknown as Record<string, unknown>)[k] ?? ''))) patch[k] = body[k];
    }
    if (c.entity === 'departments' && 'parent_id' in body) {
      const d = live as PlatformDepartment;
      const want = body.parent_id as string;
      const underRoot = d.depth === 1;
      if (want === '' ? !underRoot : d.parent_id !== want) patch.parent_id = want;
    }
    let final = live;
    if (Object.keys(patch).length > 0) {
      final = c.entity === 'departments' ? await client.patchDepartment(live.id, patch) : await client.patchPosition(live.id, patch);
    }
    ctx.record(() => mirror.recordOutcome(c.entity === 'departments' ? { entity: 'departments', record: final as PlatformDepartment } : { entity: 'positions', record: final as PlatformPosition }));
    ctx.record(() => ownership.logAdoption({ at: ctx.now(), entity: c.entity, thirdId: c.thirdId, platformId: live.id, matchedBy: 'crashed_create', detail: 'create collided with this sync\'s own record' }));
    created.set(c.id, live.id);
    return { change: c, status: 'adopted', platformId: live.id, message: 'took over this sync\'s own record' };
  }
  // Members: member_exists (phone / e-mail) or third_id_conflict.
  const live = (m: PlatformMember | undefined) => (m && m.status !== 'left' ? m : undefined);
  const wantPhone = typeof body.phone === 'string' ? normPhone(body.phone) : '';
  const wantEmail = typeof body.email === 'string' ? normEmail(body.email) : '';
  let found = live(mirror.byThirdId('members', c.thirdId));
  let matchedBy: 'crashed_create' | 'email' | 'phone' | undefined;
  if (!found) {
    // Rare (a create the platform refused as taken): the mirror read a window at a time, not held.
    for (const m of mirror.scanMembers()) {
      if (m.status === 'left') continue;
      if (wantPhone && normPhone(m.phone) === wantPhone) {
        found = m;
        break;
      }
      if (!found && wantEmail && normEmail(m.email) === wantEmail) found = m;
    }
  }
  if (!found) return { change: c, status: 'deferred', message: `${err.code}: no live member matching ${c.thirdId} after a refresh` };
  const samePerson = (!wantPhone || normPhone(found.phone) === wantPhone || !found.phone) && (!wantEmail || normEmail(found.email) === wantEmail || !found.email);
  if (found.third_user_id === c.thirdId && samePerson) matchedBy = 'crashed_create';
  else if (deps.adopt.members.includes('email') && wantEmail && normEmail(found.email) === wantEmail) matchedBy = 'email';
  else if (deps.adopt.members.includes('phone') && wantPhone && normPhone(found.phone) === wantPhone) matchedBy = 'phone';
  const ownedAlready = ownership.sourceIdOfAccount(found.account_id) !== undefined;
  if (!matchedBy && !ownedAlready) {
    return { change: c, status: 'conflict', message: `${err.code}: member ${found.account_id} is already in the tenant and not owned by this sync; left alone (sync.adopt.members enables adoption)` };
  }
  const account = found.account_id;
  await ctx.durable(() => {
    ownership.recordOwnedMember(c.thirdId, account, 'adopted', ctx.now());
    ownership.logAdoption({ at: ctx.now(), entity: 'members', thirdId: c.thirdId, platformId: account, matchedBy: matchedBy ?? 'owned', detail: `create answered 409 ${err.code}` });
  });
  const patch: Record<string, unknown> = {};
  if (typeof body.display_name === 'string' && normText(body.display_name) !== normText(found.display_name)) patch.display_name = body.display_name;
  if (typeof body.title === 'string' && normText(body.title) !== normText(found.title)) patch.title = body.title;
  if (typeof body.department_id === 'string' && body.department_id !== found.department_id) patch.department_id = body.department_id;
  if (found.third_user_id !== c.thirdId) patch.third_user_id = c.thirdId;
  let final = found;
  if (Object.keys(patch).length > 0) final = await client.patchMember(found.account_id, patch);
  ctx.record(() => mirror.recordOutcome({ entity: 'members', record: final }));
  created.set(c.id, found.account_id);
  return { change: c, status: 'adopted', platformId: found.account_id, message: `took over the existing member (${matchedBy ?? 'already owned'})` };
}

