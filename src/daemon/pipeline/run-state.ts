/**
 * The values a run passes between the stages of its pipeline (./index.ts): what a run is built from (RunOnceDeps),
 * its options, the observer's hooks, and the summary it ends with.
 */
import type { Config } from '../../config/schema.js';
import type { BlockedRecord, DesiredState, EntityKind, Plan, QuarantineEntry } from '../../domain/index.js';
import type { ApplyCounts, ChangeResult, ChangeStatus, StopReason, WriteGate } from '../../applier/index.js';
import type { Mirror } from '../../mirror/mirror.js';
import type { OwnershipStore } from '../../mirror/ownership.js';
import type { RecordHistory } from '../../mirror/record-history.js';
import type { OrgPlatformPort } from '../../platform/port.js';
import type { SelectedRecord } from '../../planner/select.js';
import type { Clock } from '../../shared/clock.js';
import { EXIT, type ExitCode } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { RunTrust } from '../trust.js';
import type { RunApprovals } from '../approvals.js';
import type { SourceReadReport, SourceReads } from '../../sources/index.js';

/** Hooks for metrics and progress; every one optional. */
export interface RunObserver {
  /** The plan of the run (the first one; re-plans are reported through onReplan). */
  onPlan?(plan: Plan, desired: DesiredState): void;
  /** A guard refused the plan. */
  onGuard?(guard: string, plan: Plan): void;
  /** Applying starts: `total` changes. */
  onApplyStart?(total: number): void;
  /** One change finished. */
  onChangeResult?(result: ChangeResult): void;
  /** A re-plan round starts with `total` changes. */
  onReplan?(round: number, total: number): void;
  /** The apply stopped starting writes (shutdown, lost lease, unrecordable write). */
  onStop?(reason: StopReason): void;
}

/** The parts every command that reads or writes the platform is built from (run, saved-plan apply, adopt, release). */
export interface RunParts {
  config: Config;
  client: OrgPlatformPort;
  mirror: Mirror;
  ownership: OwnershipStore;
  logger: Logger;
  clock: Clock;
  /** Graceful shutdown: once aborted no new write (nor retry) starts; writes in flight finish and are recorded. */
  signal?: AbortSignal;
  /** The end of the shutdown timeout: aborts the requests still in flight. */
  abortSignal?: AbortSignal;
  /** Checked before every write attempt (the lease's fencing gate); the first to refuse stops the apply. */
  writeGates?: readonly WriteGate[];
}

/** What a run is built from. The CLI builds the real parts; tests hand in their own. */
export interface RunOnceDeps extends RunParts {
  /**
   * Reads the sources (src/sources readDesiredState bound to the config and env); `reads` (issue 31): whether the
   * read may keep source snapshots, filled with how each delta-capable source was read and the snapshots' commit.
   */
  readDesiredState(signal?: AbortSignal, reads?: SourceReads): Promise<DesiredState>;
  observer?: RunObserver;
  /** Requests made and 429s seen by the client so far (the CLI counts them through the client's observer). */
  callStats?(): { requests: number; rateLimited: number };
  /** Issue 10: shrink guard, scope guard and grace period (src/daemon/trust.ts); absent: none of them. */
  trust?: RunTrust;
  /** Issue 20: saves refused plans as pending approvals and applies approved ones (src/daemon/approvals.ts). */
  approvals?: RunApprovals;
  /** Issue 22: where every write of the run is recorded per record, under this run id and trigger. */
  recordHistory?: { store: RecordHistory; runId: string; trigger: string; retentionDays: number };
}

/** Options of one run. */
export interface RunOnceOptions {
  /** `plan` refreshes, reads and plans; `apply` also applies. */
  mode: 'plan' | 'apply';
  /** `--allow-deletes N`. */
  allowDeletes?: number;
  /** Apply through the dry-run seam (nothing written). */
  dryRun?: boolean;
  /** Force a full walk of the mirror. */
  fullRefresh?: boolean;
  /** `sync --full-read` (issue 31): read every delta-capable source in full, whatever its snapshot. */
  fullRead?: boolean;
  /** An extra observer for this run only (the CLI's progress line), called after `deps.observer`. */
  observer?: RunObserver;
  /** `--allow-source-shrink`: accept a source that shrank beyond sync.max_source_shrink_percent. */
  allowSourceShrink?: boolean;
  /** `--accept-scope-change`: accept removals after the config's scope changed. */
  acceptScopeChange?: boolean;
  /** `sync --only SELECTOR` (issue 22): apply only the changes touching these records and what they need first. */
  only?: readonly string[];
  /**
   * `only` joins several callers' selectors (triggers queued behind a running run): a selector that matches nothing is
   * reported in `summary.unmatched` instead of failing the other callers' records; the run still fails when none matched.
   */
  onlyJoined?: boolean;
  /** The run's id (the run history's), recorded with a pending approval and with the approval a run uses. */
  runId?: string;
}

/** Calls every hook of `a`, then of `b`. */
export function combineObservers(a: RunObserver | undefined, b: RunObserver | undefined): RunObserver | undefined {
  if (!a || !b) return a ?? b;
  return {
    onPlan: (plan, desired) => {
      a.onPlan?.(plan, desired);
      b.onPlan?.(plan, desired);
    },
    onGuard: (guard, plan) => {
      a.onGuard?.(guard, plan);
      b.onGuard?.(guard, plan);
    },
    onApplyStart: (total) => {
      a.onApplyStart?.(total);
      b.onApplyStart?.(total);
    },
    onChangeResult: (r) => {
      a.onChangeResult?.(r);
      b.onChangeResult?.(r);
    },
    onReplan: (round, total) => {
      a.onReplan?.(round, total);
      b.onReplan?.(round, total);
    },
    onStop: (reason) => {
      a.onStop?.(reason);
      b.onStop?.(reason);
    },
  };
}

/** A change that did not succeed, for the summary. */
export interface RunFailure {
  id: string;
  entity: EntityKind;
  op: string;
  thirdId: string;
  platformId?: string;
  status: ChangeStatus;
  message: string;
}

/** How a run ended. */
export type RunResultKind = 'in_sync' | 'blocked' | 'planned' | 'applied' | 'dry_run' | 'partial' | 'refused' | 'failed' | 'stopped';

/** The summary of one run (JSON-serialisable). */
export interface RunSummary {
  syncId: string;
  mode: 'plan' | 'apply';
  result: RunResultKind;
  exitCode: ExitCode;
  /** Applied through the dry-run seam: `applied` counts what would have been written; nothing was. */
  dryRun: boolean;
  startedAt: string;
  durationMs: number;
  /** The first plan of the run. */
  plan: Plan;
  /** Applied (or adopted) changes per entity and operation, over all rounds. */
  applied: ApplyCounts;
  byStatus: Record<ChangeStatus, number>;
  /** Changes that failed, conflicted or were skipped because a prerequisite did not succeed. */
  failures: RunFailure[];
  /** Changes never started (a stop signal, or sync.max_failures reached): not failures, they simply did not run. */
  notStarted: RunFailure[];
  quarantined: QuarantineEntry[];
  /** Source records the plan could neither create nor update (never "in sync" while there are any). */
  blocked: BlockedRecord[];
  /** Members holding tenant.admin that could not be removed. */
  skippedAdmin: number;
  replanRounds: number;
  /** Changes still pending after the last re-plan round (the run did not converge). */
  notConverged: RunFailure[];
  apiCalls: number;
  rateLimited: number;
  /** Where the time went, in ms: mirror refresh, source read, planning (snapshot + plan), apply (incl. re-plans). */
  phases?: { refreshMs: number; sourcesMs: number; planMs: number; applyMs: number };
  /** One line, when the run failed or was refused. */
  error?: string;
  /** Why the apply stopped starting writes, when it did. */
  stop?: StopReason;
  /** `--only`: each selected record and what was done to it; `plan` is then the selected part of the plan. */
  selection?: SelectionOutcome[];
  /** `--only` selectors of a joined trigger run that matched no record (the run went on for the others). */
  unmatched?: string[];
  /** Issue 20: the pending approval this refused run saved, or the approval whose plan this run applied. */
  approval?: { digest: string; state: 'pending' | 'used' };
  /** Issue 31: how each delta-capable source was read (mode, reason, records read); absent when none was. */
  sourceReads?: SourceReadReport[];
}

/** `--only`: one selected record and what the run did about it. */
export interface SelectionOutcome extends SelectedRecord {
  /** One line per change of its own (`create applied`, `update failed: ...`), or why there was none. */
  done: string[];
  /** Prerequisites written for it first (`departments eng2: create applied`). */
  neededFirst: string[];
}

/** Applied counts of nothing yet. */
export const zeroApplied = (): ApplyCounts => ({
  positions: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
  departments: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
  members: { create: 0, adopt: 0, update: 0, move: 0, remove: 0 },
});

/**
 * The exit code of a run that finished with problems: 4 when a change failed or did not start; when the only problem
 * is quarantined source records, `sync.exit_code_on_quarantine` (4 or 0; the quarantine is counted either way).
 */
export function partialExitCode(summary: Pick<RunSummary, 'failures' | 'notStarted'>, onQuarantine: 0 | 4): ExitCode {
  return summary.failures.length > 0 || summary.notStarted.length > 0 ? EXIT.PARTIAL : onQuarantine;
}

/** Where a failure keeps its result: a non-enumerable own property, so JSON, spreads and Object.keys never see it. */
const RESULT = Symbol('result');
const RESULT_SLOT: PropertyDescriptor = { value: undefined, writable: false, enumerable: false, configurable: true };

/** A key of a failure, read from its result when read. */
function fromResult(read: (r: ChangeResult) => unknown): PropertyDescriptor {
  return {
    get(this: { [RESULT]: ChangeResult }): unknown {
      return read(this[RESULT]);
    },
    enumerable: true,
    configurable: true,
  };
}

const platformIdOf = (r: ChangeResult): string | undefined => r.platformId ?? r.change.platformId;
const FAILURE_KEYS = {
  id: fromResult((r) => r.change.id),
  entity: fromResult((r) => r.change.entity),
  op: fromResult((r) => r.change.op),
  thirdId: fromResult((r) => r.change.thirdId),
  platformId: fromResult(platformIdOf),
  status: fromResult((r) => r.status),
  message: fromResult((r) => r.message ?? r.status),
} as const;

/**
 * A failure as the summary lists it, read from its result (issue 31): a stopped apply of a million changes lists a
 * million not-started ones, each here one slot (no copy of its keys, no id string built for it). Its keys are own
 * enumerable accessors in toFailure's order, so JSON, spreads and comparisons see the plain failure.
 */
const ResultFailure = function (this: RunFailure, r: ChangeResult) {
  Object.defineProperty(this, 'id', FAILURE_KEYS.id);
  Object.defineProperty(this, 'entity', FAILURE_KEYS.entity);
  Object.defineProperty(this, 'op', FAILURE_KEYS.op);
  Object.defineProperty(this, 'thirdId', FAILURE_KEYS.thirdId);
  if (platformIdOf(r)) Object.defineProperty(this, 'platformId', FAILURE_KEYS.platformId);
  Object.defineProperty(this, 'status', FAILURE_KEYS.status);
  Object.defineProperty(this, 'message', FAILURE_KEYS.message);
  RESULT_SLOT.value = r;
  Object.defineProperty(this, RESULT, RESULT_SLOT);
  RESULT_SLOT.value = undefined;
} as unknown as new (r: ChangeResult) => RunFailure;
ResultFailure.prototype = Object.prototype;

/** A change that did not succeed, as the summary lists it: `id`, `entity`, `op`, `thirdId`, `platformId` (when known), `status`, `message`. */
export function toFailure(r: ChangeResult): RunFailure {
  return new ResultFailure(r);
}

/** Results per status, all zero. */
export const zeroByStatus = (): Record<ChangeStatus, number> => ({ applied: 0, adopted: 0, failed: 0, conflict: 0, deferred: 0, skipped: 0, skipped_admin: 0, not_started: 0 });
