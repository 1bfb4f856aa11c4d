import { z } from 'zod';
import { parseDuration } from './platform.js';

/** `sync.policy`: which kinds of change the reconcile may make (as in external-dns). */
export const SYNC_POLICIES = ['sync', 'upsert-only', 'create-only'] as const;
export type SyncPolicy = (typeof SYNC_POLICIES)[number];

const deleteThresholdSchema = z
  .strictObject({
    max_count: z.number().int().min(0).default(500).describe('Most removals of one entity a run may make.'),
    max_percent: z.number().min(0).max(100).default(20).describe('Most removals of one entity a run may make, as a percent of the records orgsync owns of it.'),
  })
  .describe('Over either limit nothing is applied, the plan is printed and the run exits 3 (unless `--allow-deletes N`).');

const adoptionSchema = z
  .strictObject({
    members: z
      .array(z.enum(['email', 'phone']))
      .default([])
      .describe('Take over existing members not yet owned whose e-mail (or phone) matches a desired member. Empty: never.'),
    departments: z
      .array(z.enum(['third_id', 'name']))
      .default([])
      .describe('Take over unowned departments by third_department_id, or by exact name under the same parent. Empty: never.'),
    positions: z
      .array(z.enum(['third_id', 'name']))
      .default([])
      .describe('Take over unowned positions by third_position_id, or by exact name. Empty: never.'),
  })
  .describe('Explicit adoption of records orgsync did not create; every adoption is logged.');

/** `sync.removal_grace`, as the loaded config carries it: nothing, a duration in ms (with the text written), or a number of runs. */
export type RemovalGrace = { kind: 'none' } | { kind: 'duration'; ms: number; text: string } | { kind: 'runs'; runs: number };

/** Parses a written `removal_grace` (`0`, `"0"`, `"72h"`, `{ runs: 3 }`); undefined when the text is no duration. */
function parseRemovalGrace(value: 0 | string | { runs: number }): RemovalGrace | undefined {
  if (value === 0) return { kind: 'none' };
  if (typeof value === 'object') return value.runs <= 1 ? { kind: 'none' } : { kind: 'runs', runs: value.runs };
  if (value.trim() === '0') return { kind: 'none' };
  const ms = parseDuration(value);
  return ms === undefined ? undefined : { kind: 'duration', ms, text: value.trim() };
}

/**
 * `sync.removal_grace` (issue 10): a duration (`30m`, `72h`, `7d`), `0` (at once), or `{ runs: N }` consecutive runs in
 * the file; a `RemovalGrace` value in the loaded config.
 */
export const removalGraceSchema = z
  .union([
    z.literal(0),
    z.string(),
    z.strictObject({ runs: z.number().int().min(1).describe('Consecutive runs a record must be missing from the sources before it is removed.') }),
  ])
  .transform((value, ctx): RemovalGrace => {
    const grace = parseRemovalGrace(value);
    if (grace === undefined) {
      ctx.addIssue({ code: 'custom', message: 'expected 0, a duration such as 30m, 72h or 7d, or { runs: N }', input: value });
      return z.NEVER;
    }
    return grace;
  })
  .prefault(0)
  .describe('How long a record must be missing from the sources before it is removed: 0 (at once), a duration such as 30m, 72h or 7d, or { runs: N } consecutive sync runs.');

/** `sync.lifecycle` (issue 18): dated hires and leavers. */
export const lifecycleSchema = z
  .strictObject({
    create_days_before_start: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('A member whose start_date is further away than this many days is not created yet: the plan lists them as scheduled with the date.'),
    end_action: z
      .enum(['remove', 'suspend'])
      .optional()
      .describe('What happens to a member past end_date while the export still lists them: remove (the way sync.member_removal removes) or suspend. Default: as sync.member_removal (left: remove, suspended: suspend).'),
  })
  .describe('Dated lifecycle of members: start_date and end_date fields of the sources, compared with the injected clock.');

/**
 * `sync:` — what the reconcile may do: ownership, policy, guards. In the loaded config `removal_grace` is a
 * `RemovalGrace` value and `lifecycle.end_action` is always set (its default follows `member_removal`).
 */
export const syncConfigSchema = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .max(128)
      .default('orgsync')
      .describe('This sync\'s id: written to metadata.managed_by of the departments and positions it creates, and the key of the members it owns.'),
    policy: z.enum(SYNC_POLICIES).default('sync').describe('`sync` creates, updates and removes; `upsert-only` never removes; `create-only` only creates.'),
    member_removal: z
      .enum(['left', 'suspended'])
      .default('left')
      .describe('How a member gone from the sources is removed: `left` (DELETE) or `suspended` (PATCH status).'),
    delete_threshold: deleteThresholdSchema.prefault({}),
    root_department: z
      .string()
      .min(1)
      .optional()
      .describe('Hang the source tree under this department (platform id or third_department_id) instead of the tenant root.'),
    adopt: adoptionSchema.prefault({}),
    max_failures: z
      .number()
      .int()
      .min(1)
      .default(100)
      .describe('Stop starting new writes after this many changes of one run have failed for good.'),
    max_replan_rounds: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(3)
      .describe('After a write was rejected because the platform changed (409), refresh and re-plan at most this many times; then report the records that did not converge.'),
    max_source_shrink_percent: z
      .number()
      .min(0)
      .max(100)
      .default(10)
      .describe('Shrink guard: when an entity\'s source count drops by more than this percent (and by at least two records) against the last good read, no removals of it are planned and the run stops with exit 3 (unless `--allow-source-shrink`).'),
    removal_grace: removalGraceSchema,
    exit_code_on_quarantine: z
      .union([z.literal(4), z.literal(0)])
      .default(4)
      .describe('Exit code of a `sync` whose only problem is quarantined source records: 4 (partial), or 0 (a CronJob then shows no failed Job for a record HR has to fix; the quarantine is still counted in the summary and orgsync_quarantined_records, and has its own alert). Failed writes still exit 4.'),
    lifecycle: lifecycleSchema.prefault({}),
    approve: z
      .array(z.string().regex(/^sha256:[0-9a-f]{12}$/, { message: 'expected a pending approval digest: sha256: and 12 hex characters, as the refusal message prints it' }))
      .default([])
      .describe('Pending approvals to apply (issue 20): digests (`sha256:` + 12 hex) of plans a guard refused. A run whose refused plan has an approved digest applies exactly that plan if the platform and the sources still match what it was made from; each approval is used once.'),
  })
  // lifecycle.end_action's default follows member_removal: decided here, once, so the loaded config always has it.
  .transform((sync) => ({
    ...sync,
    lifecycle: { ...sync.lifecycle, end_action: sync.lifecycle.end_action ?? (sync.member_removal === 'suspended' ? ('suspend' as const) : ('remove' as const)) },
  }))
  .prefault({})
  .describe('Reconcile behaviour: ownership, policy, adoption and the delete guard.');

export type SyncConfig = z.infer<typeof syncConfigSchema>;
