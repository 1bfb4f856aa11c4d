/**
 * Dated lifecycle (issue 18): start_date and end_date of members against the run's `now` (the injected clock; the
 * planner reads none). Each rule is a named entry of LIFECYCLE_RULES, applied in order to every desired member
 * before the member diff:
 *
 * | rule        | when                                                        | effect                                         |
 * |-------------|-------------------------------------------------------------|------------------------------------------------|
 * | `ended`     | now >= end_at and the source does not already say left     | live on the platform: removed (end_action remove: as sync.member_removal) or suspended; not on the platform: never created |
 * | `scheduled` | now < start_at - create_days_before_start days, not on the platform | not created yet; listed with the date it will be created |
 * | `ending`    | now < end_at and the source does not say left               | synced as the source says; listed with the day it goes (issue 45) |
 *
 * A member already on the platform is never taken out by `scheduled` (a future start date of a person who is there
 * does not remove them).
 */
import type { DesiredMember, PlatformMember } from '../../domain/index.js';
import type { LifecycleEvent } from '../../domain/plan.js';

/** The lifecycle options of one planning (built from sync.lifecycle by lifecycleOptionsFrom). */
export interface LifecycleOptions {
  createDaysBeforeStart: number;
  endAction: 'remove' | 'suspend';
}

const DAY_MS = 86_400_000;

interface RuleContext {
  now: number;
  opts: LifecycleOptions;
  /** Third ids of live (not left) platform members. */
  live: { has(thirdId: string): boolean };
}

/** What a rule does to one member: nothing (undefined), a changed member, or drops it (null), with the event. */
export type RuleResult = { member: DesiredMember | null; event: LifecycleEvent } | undefined;

/** One lifecycle rule. */
export interface LifecycleRule {
  name: LifecycleEvent['rule'];
  apply(m: DesiredMember, ctx: RuleContext): RuleResult;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A member past end_date goes, whatever the export's status says. */
export const endedRule: LifecycleRule = {
  name: 'ended',
  apply(m, { now, opts, live }) {
    if (m.end_at === undefined || now < m.end_at || m.status === 'left') return undefined;
    const base = { rule: 'ended' as const, thirdId: m.source_id, displayName: m.display_name, date: m.end_date ?? iso(m.end_at), at: iso(m.end_at) };
    if (!live.has(m.source_id)) return { member: { ...m, status: 'left' }, event: { ...base, action: 'not_created' } };
    if (opts.endAction === 'suspend') return m.status === 'suspended' ? undefined : { member: { ...m, status: 'suspended' }, event: { ...base, action: 'suspend' } };
    return { member: { ...m, status: 'left' }, event: { ...base, action: 'remove' } };
  },
};

/** A future hire is created create_days_before_start days before the start, not earlier. */
export const scheduledRule: LifecycleRule = {
  name: 'scheduled',
  apply(m, { now, opts, live }) {
    if (m.start_at === undefined || m.status === 'left' || live.has(m.source_id)) return undefined;
    const createAt = m.start_at - opts.createDaysBeforeStart * DAY_MS;
    if (now >= createAt) return undefined;
    return { member: null, event: { rule: 'scheduled', thirdId: m.source_id, displayName: m.display_name, date: m.start_date ?? iso(m.start_at), at: iso(m.start_at), createOn: iso(createAt) } };
  },
};

/** A member whose end date is ahead stays as the source says until then; the plan lists the day it goes. */
export const endingRule: LifecycleRule = {
  name: 'ending',
  apply(m, { now, opts }) {
    if (m.end_at === undefined || now >= m.end_at || m.status === 'left') return undefined;
    const event: LifecycleEvent = { rule: 'ending', thirdId: m.source_id, displayName: m.display_name, date: m.end_date ?? iso(m.end_at), at: iso(m.end_at), action: opts.endAction === 'suspend' ? 'suspend' : 'remove' };
    return { member: m, event };
  },
};

/** The rules, in the order they are tried (the first that applies decides). */
export const LIFECYCLE_RULES: readonly LifecycleRule[] = [endedRule, scheduledRule, endingRule];

/** The lifecycle of one member: nothing (undefined), or what the first rule that applies did. */
export function lifecycleOf(m: DesiredMember, live: { has(thirdId: string): boolean }, opts: LifecycleOptions, now: number): RuleResult {
  if (m.start_at === undefined && m.end_at === undefined) return undefined;
  const ctx: RuleContext = { now, opts, live };
  for (const rule of LIFECYCLE_RULES) {
    const result = rule.apply(m, ctx);
    if (result) return result;
  }
  return undefined;
}

/** Applies the lifecycle rules to a list: the members to diff and what each rule did (`sources preview` asks one). */
export function applyLifecycle(members: readonly DesiredMember[], platform: readonly PlatformMember[], opts: LifecycleOptions | undefined, now: number): { members: DesiredMember[]; events: LifecycleEvent[] } {
  if (!opts) return { members: members as DesiredMember[], events: [] };
  const live = new Set<string>();
  for (const p of platform) if (p.status !== 'left' && p.third_user_id !== '') live.add(p.third_user_id);
  const out: DesiredMember[] = [];
  const events: LifecycleEvent[] = [];
  for (const m of members) {
    const result = lifecycleOf(m, live, opts, now);
    if (!result) {
      out.push(m);
      continue;
    }
    events.push(result.event);
    if (result.member) out.push(result.member);
  }
  return { members: out, events };
}
