/** The select stage (`--only`, issue 22): the plan narrowed to the selected records and what they need first. */
import type { DesiredState, Plan, QuarantineEntry } from '../../domain/index.js';
import { ENTITY_KINDS } from '../../domain/index.js';
import type { PlannerSnapshot } from '../../planner/index.js';
import { selectPlan, unmatchedMessage, unmatchedRecordMessage, type PlanSelection } from '../../planner/select.js';
import { warningLogMessage } from '../../planner/warning-messages.js';
import { OrgsyncError, RECORDED_MESSAGE } from '../../shared/errors.js';
import type { Planned } from './plan.js';
import type { RunContext } from './start.js';

/** The plan the run goes on with: the whole plan, or (`--only`) its selected part. */
export interface Selected {
  plan: Plan;
  /** The quarantine the summary reports (of the selected records only, with `--only`). */
  quarantine: QuarantineEntry[];
  selection: PlanSelection | undefined;
}

/** `--only`'s part of `plan` (undefined without `--only`), matched against the platform records it was made from. */
export function narrow(run: RunContext, plan: Plan, desired: DesiredState, snapshot: PlannerSnapshot): PlanSelection | undefined {
  const only = run.options.only;
  return only && only.length > 0 ? selectPlan(plan, desired, { departments: snapshot.departments, positions: snapshot.positions, members: snapshot.members.finder() }, only) : undefined;
}

/**
 * Narrows the plan to `--only`'s records (guards were judged on the whole plan). A selector that matches nothing
 * fails the run (USAGE), unless the selectors are several triggers' joined and some matched: then it is warned about.
 */
export function selectStage(run: RunContext, planned: Planned, desired: DesiredState): Selected {
  const selection = narrow(run, planned.plan, desired, planned.snapshot);
  if (selection && selection.unmatched.length > 0) {
    // The operator's terminal gets the selectors; what is recorded and logged names them by position only (issue 44).
    const recorded = unmatchedRecordMessage(run.options.only ?? [], selection.unmatched);
    if (!run.options.onlyJoined || selection.records.length === 0) {
      throw new OrgsyncError('USAGE', unmatchedMessage(selection.unmatched), { details: { unmatched: selection.unmatched.length, [RECORDED_MESSAGE]: recorded } });
    }
    run.deps.logger.warn({ unmatched: selection.unmatched.length, selectors: run.options.only?.length ?? 0 }, 'joined trigger run: some selectors matched no record; the run goes on for the others');
  }
  return selection ? { plan: selection.plan, quarantine: selection.quarantine, selection } : { plan: planned.plan, quarantine: desired.quarantine, selection: undefined };
}

/** Tells the observer and the log about the plan the run goes on with (its counts and warnings). */
export function announcePlan(run: RunContext, plan: Plan, desired: DesiredState): void {
  run.observer?.onPlan?.(plan, desired);
  const counts = Object.fromEntries(ENTITY_KINDS.map((e) => [e, plan.counts[e]]));
  const logger = run.deps.logger;
  logger.info({ changes: plan.changes.length, counts, warnings: plan.warnings.length, withheld: plan.withheld.length, quarantined: desired.quarantine.length }, 'plan computed');
  // A static message per code; the warning's sentence (it may name the person) only in `detail` (log.personal_data).
  for (const w of plan.warnings) logger.warn({ code: w.code, entity: w.entity, third_id: w.thirdId, platform_id: w.platformId, ...(w.blocks ? { blocks: w.blocks } : {}), detail: w.message }, warningLogMessage(w));
}
