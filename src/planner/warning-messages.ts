/**
 * The log message of each plan warning code (issue 44): static text, the same for every record, so that a log line
 * carries no name, e-mail or phone. The warning's own `message` (which names the person, for the operator's terminal
 * and the plan) goes into the line's `detail` field, which JSON logs keep only with `log.personal_data: true`.
 *
 * Every code the planner and the sources emit has a row here; `test/privacy/log-messages.test.ts` keeps it so.
 */
import type { PlanWarning } from '../domain/index.js';

/** Static log messages by warning code (a `blocks` reason first, when the warning blocks a record). */
export const WARNING_LOG_MESSAGES: Readonly<Record<string, string>> = {
  not_owned_conflict: 'record left alone: a record with its source id exists on the platform and is not owned by this sync',
  contact_not_owned: 'member not created: its e-mail or phone belongs to an account this sync does not own',
  unpatchable_drift: 'member not changed: its e-mail or phone differs between the source and the platform, which cannot patch them',
  quarantined_kept: 'record kept on the platform: it is quarantined in the source',
  not_owned_absent: 'member in no source but not owned by this sync: left alone',
  unresolved_parent: 'department skipped: its parent is neither in the source nor on the platform',
  source_cycle: 'department skipped: its parent chain in the source loops back to itself',
  unresolved_department: "member's department left unchanged: the department is neither in the source nor on the platform",
  department_name_taken: 'department created beside a live department of the same name that is not this sync\'s',
  move_cycle: 'department moved to the root: its new parent lies inside its subtree',
  kept_not_empty: 'department gone from the source but kept: records would remain in it',
  invalid_phone_dropped: 'invalid phone dropped from a source record: the member is kept without it',
};

/** The fallback for a code without a row (never personal: the code is in the line's fields). */
export const UNKNOWN_WARNING_LOG_MESSAGE = 'plan warning';

/** The static log message of `w`. */
export function warningLogMessage(w: Pick<PlanWarning, 'code' | 'blocks'>): string {
  return (w.blocks !== undefined ? WARNING_LOG_MESSAGES[w.blocks] : undefined) ?? WARNING_LOG_MESSAGES[w.code] ?? UNKNOWN_WARNING_LOG_MESSAGE;
}
