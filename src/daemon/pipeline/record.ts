/**
 * The record stage: the run's closing figures (API calls, duration, apply time), `--only`'s outcome per selected
 * record, and the record history pruned after an applying run.
 */
import type { ChangeResult } from '../../applier/index.js';
import type { EntityKind, Plan } from '../../domain/index.js';
import type { PlanSelection, SelectedRecord } from '../../planner/select.js';
import type { RunSummary, SelectionOutcome } from './run-state.js';
import type { Selected } from './select.js';
import type { RunContext } from './start.js';

/** Closes the summary of a run; `applied`: the run went through the apply stage (its time is the apply phase). */
export function recordStage(run: RunContext, summary: RunSummary, selected: Selected, results: ReadonlyMap<string, ChangeResult>, applied: boolean): RunSummary {
  const { deps, options } = run;
  const calls = deps.callStats?.() ?? { requests: 0, rateLimited: 0 };
  summary.apiCalls = calls.requests - run.callsAtStart.requests;
  summary.rateLimited = calls.rateLimited - run.callsAtStart.rateLimited;
  summary.durationMs = deps.clock.now() - run.started;
  if (applied) run.lap('applyMs');
  const selection = selected.selection;
  if (selection) summary.selection = selectionOutcomes(selection, summary, results);
  if (selection && selection.unmatched.length > 0) summary.unmatched = selection.unmatched;
  if (options.mode === 'apply') run.writes.pruneHistory();
  return summary;
}

/** What the run did about each selected record (the `--only` summary). */
export function selectionOutcomes(selection: PlanSelection, summary: RunSummary, results: ReadonlyMap<string, ChangeResult>): SelectionOutcome[] {
  const own = new Set(selection.selectedChangeIds);
  const line = (c: Plan['changes'][number]): string => {
    const r = results.get(c.id);
    if (r) return `${c.op} ${r.status === 'applied' && summary.dryRun ? 'would be applied (dry run)' : r.status}${r.message && r.status !== 'applied' && r.status !== 'adopted' ? `: ${r.message}` : ''}`;
    if (summary.result === 'refused') return `${c.op} refused by ${summary.plan.refusal?.guard ?? 'a guard'}`;
    return `${c.op} ${summary.mode === 'plan' ? 'planned' : 'not started'}`;
  };
  const isMine = (r: SelectedRecord, c: { entity: EntityKind; thirdId: string; platformId?: string }): boolean =>
    c.entity === r.entity && ((r.thirdId !== '' && c.thirdId === r.thirdId) || (r.platformId !== undefined && c.platformId === r.platformId));
  return selection.records.map((rec) => {
    const mine = summary.plan.changes.filter((c) => own.has(c.id) && isMine(rec, c));
    const done = mine.map(line);
    for (const b of summary.blocked) if (isMine(rec, { entity: b.entity, thirdId: b.sourceId, ...(b.platformId ? { platformId: b.platformId } : {}) })) done.push(`blocked: ${b.reason}: ${b.message}`);
    for (const q of summary.quarantined) if (q.entity === rec.entity && q.source_id === rec.thirdId) done.push(`quarantined: ${q.reason}: ${q.message}`);
    for (const w of summary.plan.withheld) if (isMine(rec, w.change)) done.push(`withheld ${w.change.op} (${w.why}${w.dueAt ? `, due ${w.dueAt}` : ''})`);
    for (const w of summary.plan.warnings) if (!w.blocks && isMine(rec, w)) done.push(`no write: ${w.code}: ${w.message}`);
    if (done.length === 0) done.push('nothing to do: the platform already matches the sources');
    const mineIds = new Set(mine.map((c) => c.id));
    const neededFirst = summary.plan.changes
      .filter((c) => !mineIds.has(c.id) && !selection.records.some((o) => own.has(c.id) && isMine(o, c)))
      .filter((c) => dependsTransitively(summary.plan.changes, mine, c.id))
      .map((c) => `${c.entity} ${c.thirdId || c.platformId || ''}: ${line(c)}`);
    return { ...rec, done, neededFirst };
  });
}

/** True when one of `from` waits (directly or not) for the change `id`. */
function dependsTransitively(changes: Plan['changes'], from: Plan['changes'], id: string): boolean {
  const byId = new Map(changes.map((c) => [c.id, c]));
  const seen = new Set<string>();
  const stack = from.flatMap((c) => c.dependsOn);
  while (stack.length > 0) {
    const d = stack.pop()!;
    if (d === id) return true;
    if (seen.has(d)) continue;
    seen.add(d);
    for (const next of byId.get(d)?.dependsOn ?? []) stack.push(next);
  }
  return false;
}
