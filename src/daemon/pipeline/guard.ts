/**
 * The guard stage: a plan a guard refused stops the run, unless (issue 20) it is an approved plan's: then exactly that
 * plan is applied. A refused applying run saves its plan as a pending approval.
 */
import type { Change, DesiredState } from '../../domain/index.js';
import { EXIT } from '../../shared/errors.js';
import type { ApprovalDecision } from '../approvals.js';
import { overriddenPlan, type Planned } from './plan.js';
import type { RunSummary } from './run-state.js';
import type { Selected } from './select.js';
import type { RunContext } from './start.js';
import { nothingToDo } from './summary.js';

/** What the guards let through: nothing (refused), or the changes to apply. */
export type Gate =
  | { kind: 'refused' }
  | {
      kind: 'go';
      changes: readonly Change[];
      /** An approved plan's changes: applied exactly (no re-plan adds to them), under this digest. */
      approval?: string;
      /** Records the run's trust observation once it applied. */
      commitTrust: (() => void) | undefined;
    };

/** Asks the approvals about a refused applying run of the whole plan (undefined: not asked, or none kept). */
function askApprovals(run: RunContext, planned: Planned, selected: Selected, desired: DesiredState): ApprovalDecision | undefined {
  const refusal = selected.plan.refusal;
  const approvals = run.writes.approvals;
  if (!refusal || refusal.guard === 'empty_source' || !approvals || run.options.mode !== 'apply' || selected.selection) return undefined;
  return approvals.onRefusal({
    plan: selected.plan,
    desired,
    now: run.deps.clock.now(),
    ...(run.options.runId ? { runId: run.options.runId } : {}),
    overridden: () => overriddenPlan(run, planned, desired),
  });
}

/** Judges the plan: refused (the summary says why), or the changes to apply (an approved plan's, or the plan's). */
export function guardStage(run: RunContext, planned: Planned, selected: Selected, desired: DesiredState, summary: RunSummary): Gate {
  const { logger } = run.deps;
  const plan = selected.plan;
  const decision = askApprovals(run, planned, selected, desired);
  if (decision?.kind === 'apply') {
    logger.warn({ approval: decision.digest, guard: plan.refusal!.guard, changes: decision.plan.changes.length }, 'applying an approved plan');
    summary.approval = { digest: decision.digest, state: 'used' };
    summary.plan = decision.plan;
    summary.result = decision.plan.changes.length === 0 ? nothingToDo(summary) : 'planned';
    return { kind: 'go', changes: decision.plan.changes, approval: decision.digest, commitTrust: decision.commitTrust };
  }
  if (!plan.refusal) return { kind: 'go', changes: plan.changes, commitTrust: planned.trust ? () => planned.trust!.commit() : undefined };
  if (decision) {
    plan.refusal.message = decision.message;
    summary.approval = { digest: decision.digest, state: 'pending' };
    logger.warn({ approval: decision.digest, guard: plan.refusal.guard }, 'plan saved as pending approval');
  }
  run.observer?.onGuard?.(plan.refusal.guard, plan);
  summary.error = plan.refusal.message;
  if (plan.refusal.guard === 'empty_source') {
    summary.result = 'failed';
    summary.exitCode = EXIT.FAILED;
    logger.error({ guard: plan.refusal.guard, reason: plan.refusal.message }, 'run refused: a source yielded no records of an entity this sync owns');
  } else {
    summary.result = 'refused';
    summary.exitCode = EXIT.GUARD;
    logger.error({ guard: plan.refusal.guard, entities: plan.refusal.entities, reason: plan.refusal.message }, 'plan refused by a guard: nothing applied');
  }
  return { kind: 'refused' };
}
