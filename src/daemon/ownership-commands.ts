/**
 * `orgsync adopt` and `orgsync release` (issue 10): explicit ownership changes, each computed first as a list of
 * actions (printed, and all a `--dry-run` does), then carried out.
 * - adopt: take over unowned platform records that match a desired record (members by e-mail, phone or third id;
 *   departments and positions by third id). Members: an ownership record in the state DB. Departments and positions:
 *   metadata.managed_by set on the platform. Every adoption is logged; the next sync patches what differs.
 * - release: give owned records up. Members: the ownership record is deleted. Departments and positions:
 *   metadata.managed_by is removed. Nothing on the platform is deleted, and the sync no longer patches or removes them.
 */
import { RecordHistory } from '../mirror/record-history.js';
import { throughSeam } from '../applier/index.js';
import type { DesiredMember, DesiredState, EntityKind, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/index.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { isPlatformError, platformFailure } from '../platform/errors.js';
import { departmentOwnership, MANAGED_BY_KEY, normEmail, normPhone, positionOwnership } from '../planner/index.js';
import { EXIT, OrgsyncError, oneLine } from '../shared/errors.js';
import type { RunHistory } from '../mirror/runs.js';
import { refreshOptionsFrom } from './pipeline/options.js';
import { refreshStage } from './pipeline/refresh.js';
import type { RunParts } from './pipeline/run-state.js';

/** What `--match` compares. */
export type AdoptMatch = 'email' | 'phone' | 'third-id';

/** One ownership change. */
export interface OwnershipAction {
  kind: 'adopt' | 'release';
  entity: EntityKind;
  /** The source id the record is (or was) owned under. */
  thirdId: string;
  platformId: string;
  /** e.g. `"Ann Lee" <ann@acme.test>` or `/Acme/Sales`. */
  label: string;
  /** What matched (adopt) or why it is released. */
  detail: string;
  /** Adopt: `email`, `phone` or `third_id` (the adoption log's matched_by). */
  matchedBy?: string;
}

/** The parts the commands need (the CLI builds them from the run environment). */
export interface OwnershipCommandDeps extends RunParts {
  trust: TrustStateStore;
}

/** Brings the mirror up to date (as a run does) so actions are computed against the platform as it is. */
export async function refreshForOwnership(deps: OwnershipCommandDeps): Promise<void> {
  await refreshStage(deps, refreshOptionsFrom(deps.config));
}

/**
 * What carries the actions out: runOwnershipCommand (recorded in the run and record histories), or in a dry run
 * nothing at all. Chosen at the dry-run seam, once, like a run's writes.
 */
export function ownershipRunner(deps: OwnershipCommandDeps & { history: RunHistory; runId: string }, dryRun: boolean): (kind: OwnershipAction['kind'], actions: readonly OwnershipAction[]) => Promise<void> {
  return throughSeam(
    dryRun,
    () => (kind: OwnershipAction['kind'], actions: readonly OwnershipAction[]) => runOwnershipCommand(deps, kind, actions),
    () => async () => undefined,
  );
}

const memberLabel = (m: PlatformMember): string => `"${m.display_name}"${m.email ? ` <${m.email}>` : m.phone ? ` <${m.phone}>` : ''}`;

/** The adoptions `orgsync adopt --match <match> --entity <entity>` would make (nothing is changed). */
export function planAdoption(deps: Pick<OwnershipCommandDeps, 'mirror' | 'ownership' | 'config'>, desired: DesiredState, match: AdoptMatch, entity: EntityKind): OwnershipAction[] {
  const syncId = deps.config.sync.id;
  if (entity !== 'members' && match !== 'third-id') {
    throw new OrgsyncError('USAGE', `--match ${match} applies to members only; ${entity} are adopted with --match third-id`);
  }
  const actions: OwnershipAction[] = [];
  if (entity === 'members') {
    const owned = deps.ownership.ownedMembers();
    const ownedAccounts = new Set(owned.values());
    const live = deps.mirror.all('members').filter((m) => m.status !== 'left' && !ownedAccounts.has(m.account_id));
    const key = (m: PlatformMember | DesiredMember): string => {
      if (match === 'email') return normEmail(m.email ?? '');
      if (match === 'phone') return normPhone(m.phone ?? '');
      return 'third_user_id' in m ? m.third_user_id : m.source_id;
    };
    const byKey = new Map<string, PlatformMember>();
    for (const m of live) if (key(m) !== '') byKey.set(key(m), m);
    const taken = new Set<string>();
    for (const d of desired.members) {
      if (d.status === 'left' || owned.has(d.source_id)) continue;
      const k = key(d);
      const m = k === '' ? undefined : byKey.get(k);
      if (!m || taken.has(m.account_id)) continue;
      taken.add(m.account_id);
      actions.push({ kind: 'adopt', entity, thirdId: d.source_id, platformId: m.account_id, label: memberLabel(m), detail: `matched by ${match === 'third-id' ? 'third id' : match} to source record ${d.source_id}`, matchedBy: match === 'third-id' ? 'third_id' : match });
    }
    return actions;
  }
  const wanted = new Set((desired[entity] as { source_id: string }[]).map((d) => d.source_id));
  const records = entity === 'departments' ? deps.mirror.all('departments') : deps.mirror.all('positions');
  for (const r of records) {
    if (r.status === 'deleted') continue;
    const third = entity === 'departments' ? (r as PlatformDepartment).third_department_id : (r as PlatformPosition).third_position_id;
    if (third === '' || !wanted.has(third)) continue;
    const who = entity === 'departments' ? departmentOwnership(r as PlatformDepartment, syncId) : positionOwnership(r as PlatformPosition, syncId);
    if (who !== 'unmanaged') continue;
    const label = entity === 'departments' ? (r as PlatformDepartment).path : `"${r.name}"`;
    actions.push({ kind: 'adopt', entity, thirdId: third, platformId: r.id, label, detail: `matched by third id to source record ${third}`, matchedBy: 'third_id' });
  }
  return actions;
}

/** The releases `orgsync release <selector>` would make: owned records named by third id, platform id or e-mail. */
export function planRelease(deps: Pick<OwnershipCommandDeps, 'mirror' | 'ownership' | 'config'>, selector: string, entity?: EntityKind): OwnershipAction[] {
  const syncId = deps.config.sync.id;
  const k = selector.trim();
  const actions: OwnershipAction[] = [];
  if (entity === undefined || entity === 'members') {
    const byAccount = new Map(deps.mirror.all('members').map((m) => [m.account_id, m]));
    for (const [third, account] of deps.ownership.ownedMembers()) {
      const m = byAccount.get(account);
      const hit = third === k || account === k || (m !== undefined && m.email !== '' && normEmail(m.email) === normEmail(k));
      if (hit) actions.push({ kind: 'release', entity: 'members', thirdId: third, platformId: account, label: m ? memberLabel(m) : account, detail: 'the ownership record is deleted' });
    }
  }
  for (const e of ['departments', 'positions'] as const) {
    if (entity !== undefined && entity !== e) continue;
    const records = e === 'departments' ? deps.mirror.all('departments') : deps.mirror.all('positions');
    for (const r of records) {
      if (r.status === 'deleted') continue;
      const third = e === 'departments' ? (r as PlatformDepartment).third_department_id : (r as PlatformPosition).third_position_id;
      if (r.id !== k && (third === '' || third !== k)) continue;
      const who = e === 'departments' ? departmentOwnership(r as PlatformDepartment, syncId) : positionOwnership(r as PlatformPosition, syncId);
      if (who !== 'owned') continue;
      actions.push({ kind: 'release', entity: e, thirdId: third, platformId: r.id, label: e === 'departments' ? (r as PlatformDepartment).path : `"${r.name}"`, detail: `metadata.${MANAGED_BY_KEY} is removed` });
    }
  }
  return actions;
}

/**
 * When `actions` span more than one entity (a selector or `--match third-id` without `--entity` that names, say,
 * member 100 and department 100), the text that refuses them: one line saying so, then one line per match. Undefined
 * when they span at most one entity. The caller prints it and exits 2: which record was meant is for the user to say.
 */
export function ambiguousEntities(kind: OwnershipAction['kind'], what: string, actions: readonly OwnershipAction[]): string | undefined {
  const entities = [...new Set(actions.map((a) => a.entity))];
  if (entities.length < 2) return undefined;
  const lines = [
    `orgsync: ${what} matches records of more than one entity (${entities.map((e) => `${actions.filter((a) => a.entity === e).length} ${e}`).join(', ')}); nothing was ${kind === 'adopt' ? 'adopted' : 'released'}. Name the entity with --entity ${entities.join('|')}:`,
  ];
  for (const a of actions) lines.push(`  ${a.entity} ${a.thirdId || '(no third id)'} ${a.label} (platform id ${a.platformId})`);
  return `${lines.join('\n')}\n`;
}

/**
 * Carries out adoptions or releases like applyOwnershipActions, and records the command in the run history (trigger
 * `adopt` or `release`, result `success` or `failed`, counts per entity) so /status shows it beside the sync runs.
 */
export async function runOwnershipCommand(deps: OwnershipCommandDeps & { history: RunHistory; runId: string }, kind: OwnershipAction['kind'], actions: readonly OwnershipAction[]): Promise<void> {
  const started = deps.clock.now();
  deps.history.start(deps.runId, kind, started);
  const done: OwnershipAction[] = [];
  let error: string | undefined;
  try {
    await applyOwnershipActions(deps, actions, (a) => done.push(a));
  } catch (err) {
    error = oneLine(err);
    throw err;
  } finally {
    const byEntity = { members: 0, departments: 0, positions: 0 };
    for (const a of done) byEntity[a.entity] += 1;
    const summary = { result: error ? 'failed' : kind === 'adopt' ? 'adopted' : 'released', [kind === 'adopt' ? 'adopted' : 'released']: byEntity, writes: done.length, planned: actions.length, ...(error ? { error } : {}) };
    try {
      // Issue 22: each adoption or release in the per-record history, under the command's run id.
      const records = new RecordHistory(deps.history.database);
      for (const a of done) {
        const managed: Record<string, { old: string | null; new: string | null }> = a.entity === 'members' ? {} : { 'metadata.managed_by': a.kind === 'adopt' ? { old: null, new: deps.config.sync.id } : { old: deps.config.sync.id, new: null } };
        records.recordEntry({ at: deps.clock.now(), entity: a.entity, sourceId: a.thirdId, platformId: a.platformId, runId: deps.runId, trigger: kind, op: a.kind, description: `${a.kind} ${a.entity} ${a.label}: ${a.detail}`, fields: managed, result: a.kind === 'adopt' ? 'adopted' : 'released', message: null });
      }
    } catch (err) {
      deps.logger.warn({ error: oneLine(err) }, 'could not record the command in the record history');
    }
    try {
      deps.history.finish(deps.runId, { finishedAt: deps.clock.now(), result: error ? 'failed' : 'success', exitCode: error ? EXIT.FAILED : EXIT.OK, summary, ...(error ? { error } : {}) });
    } catch (err) {
      deps.logger.warn({ error: oneLine(err) }, 'could not record the command in the run history');
    }
  }
}

/** Carries out adoptions or releases (in order), each recorded in the mirror, the ownership store and the log. */
export async function applyOwnershipActions(deps: OwnershipCommandDeps, actions: readonly OwnershipAction[], onDone?: (a: OwnershipAction) => void): Promise<void> {
  const now = (): string => new Date(deps.clock.now()).toISOString();
  for (const a of actions) {
    try {
      if (a.entity === 'members') {
        if (a.kind === 'adopt') {
          deps.ownership.recordOwnedMember(a.thirdId, a.platformId, 'adopted', now());
          deps.ownership.logAdoption({ at: now(), entity: 'members', thirdId: a.thirdId, platformId: a.platformId, matchedBy: a.matchedBy ?? 'third_id', detail: 'orgsync adopt' });
        } else {
          deps.ownership.releaseMember(a.thirdId);
          deps.trust.forgetMissing('members', a.thirdId);
        }
      } else {
        const current = deps.mirror.snapshot()[a.entity].byId.get(a.platformId) as PlatformDepartment | PlatformPosition | undefined;
        const metadata: Record<string, unknown> = { ...(current?.metadata ?? {}) };
        if (a.kind === 'adopt') metadata[MANAGED_BY_KEY] = deps.config.sync.id;
        else delete metadata[MANAGED_BY_KEY];
        if (a.entity === 'departments') deps.mirror.recordOutcome({ entity: 'departments', record: await deps.client.patchDepartment(a.platformId, { metadata }) });
        else deps.mirror.recordOutcome({ entity: 'positions', record: await deps.client.patchPosition(a.platformId, { metadata }) });
        if (a.kind === 'adopt') deps.ownership.logAdoption({ at: now(), entity: a.entity, thirdId: a.thirdId, platformId: a.platformId, matchedBy: 'third_id', detail: 'orgsync adopt' });
        else deps.trust.forgetMissing(a.entity, a.thirdId || a.platformId);
      }
      deps.logger.info({ change: a.kind, entity: a.entity, third_id: a.thirdId, platform_id: a.platformId }, a.kind === 'adopt' ? 'record adopted' : 'record released');
      onDone?.(a);
    } catch (err) {
      if (isPlatformError(err)) throw platformFailure(err, `${a.kind} ${a.entity} ${a.thirdId || a.platformId}: `);
      throw err;
    }
  }
}

/** The text printed before anything changes: what would change, one line per record. */
export function renderOwnershipPlan(kind: OwnershipAction['kind'], actions: readonly OwnershipAction[]): string {
  if (actions.length === 0) return `Nothing to ${kind}.\n`;
  const lines = [`${kind === 'adopt' ? 'Would adopt' : 'Would release'} ${actions.length} record(s):`];
  for (const a of actions) lines.push(`  ${kind === 'adopt' ? '@' : '-'} ${a.entity} ${a.thirdId || '(no third id)'} ${a.label} (platform id ${a.platformId}): ${a.detail}`);
  return `${lines.join('\n')}\n`;
}

/** The closing line, after the actions were carried out (or not, in a dry run). */
export function renderOwnershipDone(kind: OwnershipAction['kind'], count: number, dryRun: boolean): string {
  if (count === 0) return '';
  if (dryRun) return 'Dry run: nothing changed.\n';
  return `${kind === 'adopt' ? 'Adopted' : 'Released'} ${count} record(s)${kind === 'release' ? ' (nothing on the platform was deleted)' : ''}.\n`;
}
