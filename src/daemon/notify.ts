/** The events of a finished run for the notifier (issue 20): refused, pending_approval, failed, partial, recovered. */
import type { RunRecordResult } from '../mirror/runs.js';
import type { NotifyEvent } from '../observability/notify/index.js';
import type { RunSummary } from './run-once.js';
import { runResultOf } from './daemon.js';

/** The events of a run. `previous`: the result of the sync run before it (recovered = a success after a bad one). */
export function notifyEventsOf(summary: RunSummary, runId: string | null, previous: RunRecordResult | undefined, at: string): NotifyEvent[] {
  const base = {
    syncId: summary.syncId,
    runId,
    at,
    result: summary.result,
    exitCode: summary.exitCode,
    counts: { planned: summary.plan.counts, applied: summary.applied, failures: summary.failures.length, quarantined: summary.quarantined.length, blocked: summary.blocked.length },
    guard: summary.plan.refusal?.guard ?? null,
    digest: summary.approval?.digest ?? null,
    message: summary.error ?? null,
  };
  // A dry run notifies nothing: its notifier is the seam's no-op one (src/app/run-environment.ts).
  if (summary.mode !== 'apply') return [];
  const result = runResultOf(summary);
  const out: NotifyEvent[] = [];
  if (result === 'guard') {
    out.push({ ...base, event: 'refused' });
    if (summary.approval?.state === 'pending') out.push({ ...base, event: 'pending_approval' });
  } else if (result === 'failed') out.push({ ...base, event: 'failed' });
  else if (result === 'partial') out.push({ ...base, event: 'partial' });
  else if (result === 'success' && previous !== undefined && previous !== 'success' && previous !== 'dry_run' && previous !== 'running') out.push({ ...base, event: 'recovered' });
  return out;
}

/** A run that threw before it had a summary (a source or platform failure): the `failed` event. */
export function failedEvent(syncId: string, runId: string | null, message: string, at: string): NotifyEvent {
  const zero = {};
  return { event: 'failed', syncId, runId, at, result: 'failed', exitCode: 1, counts: { planned: zero, applied: zero, failures: 0, quarantined: 0, blocked: 0 }, guard: null, digest: null, message };
}
