/**
 * `orgsync adopt` and `orgsync release` (issue 10): explicit ownership changes, each computed first as a list of
 * actions (printed), then carried out as Changes by the applier, as a sync's plan is (issue 30): a `--dry-run` goes
 * through the applier's dry executor like a sync's, so nothing is written and no line says a record changed.
 * - adopt: take over unowned platform records that match a desired record (members by e-mail, phone or third id;
 *   departments and positions by third id). Members: an ownership record in the state DB. Departments and positions:
 *   metadata.managed_by set on the platform. Every adoption is logged; the next sync patches what differs.
 * - release: give owned records up. Members: the ownership record is deleted. Departments and positions:
 *   metadata.managed_by is removed. Nothing on the platform is deleted, and the sync no longer patches or removes them.
 */
import { RecordHistory } from '../mirror/record-history.js';
import { applyChanges, CREDENTIAL_STOPS, throughSeam, type ApplyResult, type ReleaseChange } from '../applier/index.js';
import type { Change, DesiredMember, DesiredState, EntityKind, PlanRequest, PlanValue, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/index.js';
import type { MirrorSnapshot } from '../mirror/mirror.js';
import type { TrustStateStore } from '../mirror/trust-state.js';
import { departmentOwnership, MANAGED_BY_KEY, normEmail, normPhone, positionOwnership } from '../planner/index.js';
import { EXIT, OrgsyncError, oneLine } from '../shared/errors.js';
import type { RunHistory } from '../mirror/runs.js';
import { LEASE_LOST } from './fencing.js';
import { applyOptionsFrom, refreshOptionsFrom } from './pipeline/options.js';
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
  matchedBy?: 'email' | 'phone' | 'third_id';
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
 * What carries the actions out: applyOwnershipChanges through the applier, whose executor is the dry-run seam, and
 * what records them, picked at the seam once: the run and record histories, or in a dry run nothing at all.
 */
export function ownershipRunner(deps: OwnershipCommandDeps & { history: RunHistory; runId: string }, dryRun: boolean): (kind: OwnershipAction['kind'], actions: readonly OwnershipAction[]) => Promise<void> {
  return (kind, actions) =>
    runOwnershipCommand(
      deps,
      actions,
      dryRun,
      throughSeam(
        dryRun,
        () => realOwnershipRecords(deps, kind),
        () => DRY_RUN_OWNERSHIP_RECORDS,
      ),
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
    const { ownership } = deps;
    const key = (m: PlatformMember | DesiredMember): string => {
      if (match === 'email') return normEmail(m.email ?? '');
      if (match === 'phone') return normPhone(m.phone ?? '');
      return 'third_user_id' in m ? m.third_user_id : m.source_id;
    };
    // Every live member this sync does not own, by the key: what adopt may take over (the mirror read a window at a time).
    const byKey = new Map<string, PlatformMember>();
    for (const m of deps.mirror.scanMembers()) if (m.status !== 'left' && key(m) !== '' && ownership.sourceIdOfAccount(m.account_id) === undefined) byKey.set(key(m), m);
    const taken = new Set<string>();
    for (const d of desired.members) {
      if (d.status === 'left' || ownership.accountOf(d.source_id) !== undefined) continue;
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

/** The members this sync owns that `k` names (its source id, account or e-mail): source id -> account, by source id. */
function ownedMembersNamed(deps: Pick<OwnershipCommandDeps, 'mirror' | 'ownership'>, k: string): [string, string][] {
  const { ownership, mirror } = deps;
  const hits = new Map<string, string>();
  const byThird = ownership.accountOf(k);
  if (byThird !== undefined) hits.set(k, byThird);
  const byAccount = ownership.sourceIdOfAccount(k);
  if (byAccount !== undefined) hits.set(byAccount, k);
  if (k.includes('@')) {
    const email = normEmail(k);
    for (const m of mirror.scanMembers()) {
      const third = m.email !== '' && normEmail(m.email) === email ? ownership.sourceIdOfAccount(m.account_id) : undefined;
      if (third !== undefined) hits.set(third, m.account_id);
    }
  }
  return [...hits].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The releases `orgsync release <selector>` would make: owned records named by third id, platform id or e-mail. */
export function planRelease(deps: Pick<OwnershipCommandDeps, 'mirror' | 'ownership' | 'config'>, selector: string, entity?: EntityKind): OwnershipAction[] {
  const syncId = deps.config.sync.id;
  const k = selector.trim();
  const actions: OwnershipAction[] = [];
  if (entity === undefined || entity === 'members') {
    for (const [third, account] of ownedMembersNamed(deps, k)) {
      const m = deps.mirror.get('members', account);
      actions.push({ kind: 'release', entity: 'members', thirdId: third, platformId: account, label: m ? memberLabel(m) : account, detail: 'the ownership record is deleted' });
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

/** What an ownership command writes besides its changes: a run-history row, the record history, a log line each. */
export interface OwnershipRecords {
  /** The command starts (its run-history row). */
  start(): void;
  /** One adoption or release succeeded. */
  done(a: OwnershipAction): void;
  /** The command ended, with what succeeded, out of how many, and the error it ended with. */
  finish(done: readonly OwnershipAction[], planned: number, error: string | undefined): void;
}

/** What a dry run records: nothing (no run-history row, no record history, no line saying a record changed). */
export const DRY_RUN_OWNERSHIP_RECORDS: OwnershipRecords = { start: () => undefined, done: () => undefined, finish: () => undefined };

/**
 * The records of an adopt or release run under `deps.runId` (trigger `adopt` or `release`): the run history (result
 * `success` or `failed`, counts per entity, so /status shows it beside the sync runs), each record's history entry,
 * and the line `record adopted` / `record released`. Failures to record are logged, never fatal.
 */
export function realOwnershipRecords(deps: OwnershipCommandDeps & { history: RunHistory; runId: string }, kind: OwnershipAction['kind']): OwnershipRecords {
  return {
    start: () => deps.history.start(deps.runId, kind, deps.clock.now()),
    done: (a) => deps.logger.info({ change: a.kind, entity: a.entity, third_id: a.thirdId, platform_id: a.platformId }, a.kind === 'adopt' ? 'record adopted' : 'record released'),
    finish(done, planned, error) {
      const byEntity = { members: 0, departments: 0, positions: 0 };
      for (const a of done) byEntity[a.entity] += 1;
      const summary = { result: error ? 'failed' : kind === 'adopt' ? 'adopted' : 'released', [kind === 'adopt' ? 'adopted' : 'released']: byEntity, writes: done.length, planned, ...(error ? { error } : {}) };
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
    },
  };
}

/**
 * Carries out adoptions or releases through the applier (applyOwnershipChanges) and records them with `records`;
 * rethrows what stopped them, after recording what succeeded.
 */
export async function runOwnershipCommand(deps: OwnershipCommandDeps, actions: readonly OwnershipAction[], dryRun: boolean, records: OwnershipRecords): Promise<void> {
  records.start();
  const done: OwnershipAction[] = [];
  let error: string | undefined;
  try {
    await applyOwnershipChanges(deps, actions, dryRun, (a) => {
      done.push(a);
      records.done(a);
    });
  } catch (err) {
    error = oneLine(err);
    throw err;
  } finally {
    records.finish(done, actions.length, error);
  }
}

/** The id of the change of `a`: `<entity>:<kind>:<third id or platform id>`, `:<n>` added when taken already. */
function ownershipChangeId(a: OwnershipAction, taken: Set<string>): string {
  const base = `${a.entity}:${a.kind}:${a.thirdId || a.platformId}`;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}:${n}`;
  taken.add(id);
  return id;
}

/**
 * The Changes that carry `actions` out, in order, for the applier (as a sync's plan is). Adopt: op `adopt` (members:
 * no request, the applier records the ownership; departments and positions: PATCH metadata with managed_by, current
 * metadata kept). Release: a ReleaseChange (members: no request; departments and positions: PATCH metadata without
 * managed_by). `snapshot`: the mirror the metadata is read from.
 */
export function ownershipChanges(actions: readonly OwnershipAction[], snapshot: MirrorSnapshot, syncId: string): Change[] {
  const taken = new Set<string>();
  return actions.map((a): Change => {
    const base = { id: ownershipChangeId(a, taken), entity: a.entity, thirdId: a.thirdId, platformId: a.platformId, description: `${a.kind} ${a.entity} ${a.label}`, reason: `orgsync ${a.kind}`, dependsOn: [] as string[] };
    let request: PlanRequest | undefined;
    let fields: Record<string, PlanValue> = {};
    if (a.entity !== 'members') {
      const current = snapshot[a.entity].byId.get(a.platformId) as PlatformDepartment | PlatformPosition | undefined;
      const metadata = { ...(current?.metadata ?? {}) } as Record<string, PlanValue>;
      if (a.kind === 'adopt') metadata[MANAGED_BY_KEY] = syncId;
      else delete metadata[MANAGED_BY_KEY];
      fields = { metadata };
      request = { method: 'PATCH', path: `/org/${a.entity}/${encodeURIComponent(a.platformId)}`, body: fields };
    }
    const withRequest = request ? { ...base, fields, request } : { ...base, fields };
    if (a.kind === 'release') {
      const release: ReleaseChange = { ...withRequest, op: 'update', releases: true };
      return release;
    }
    return { ...withRequest, op: 'adopt', adoptedBy: a.matchedBy ?? 'third_id' };
  });
}

/**
 * The error an ownership command ends with when its apply did not succeed throughout, else undefined. A stop that is
 * no single change's fault (a write that could not be recorded: STATE_ERROR; a lost lease: STATE_LOCKED) is told as
 * such; otherwise the first change that did not succeed, named by its action, with why (CREDENTIAL_REJECTED for a
 * refused key, as the command said before it went through the applier; else PLATFORM_ERROR).
 */
export function ownershipFailure(result: ApplyResult, actionOf: ReadonlyMap<Change, OwnershipAction>): OrgsyncError | undefined {
  const stop = result.stopReason;
  if (stop?.kind === 'state_unrecordable') return new OrgsyncError('STATE_ERROR', stop.message);
  if (stop?.kind === LEASE_LOST) return new OrgsyncError('STATE_LOCKED', stop.message);
  const first = result.results.find((r) => r.status !== 'applied' && r.status !== 'adopted');
  if (!first) return stop ? new OrgsyncError('PLATFORM_ERROR', stop.message) : undefined;
  const a = actionOf.get(first.change);
  const what = a ? `${a.kind} ${a.entity} ${a.thirdId || a.platformId}` : first.change.id;
  const credential = stop !== undefined && CREDENTIAL_STOPS.has(stop.kind);
  return new OrgsyncError(credential ? 'CREDENTIAL_REJECTED' : 'PLATFORM_ERROR', `${what}: ${first.message ?? first.status}`);
}

/**
 * Carries out adoptions or releases as Changes through applyChanges, as a sync's are: its executor is the one
 * dry-run seam (`dryRun`: nothing is written, every line says it would apply), the first failure stops it, and
 * `onDone` hears each that succeeded. Throws ownershipFailure when one did not.
 */
export async function applyOwnershipChanges(deps: OwnershipCommandDeps, actions: readonly OwnershipAction[], dryRun: boolean, onDone?: (a: OwnershipAction) => void): Promise<void> {
  const changes = ownershipChanges(actions, deps.mirror.snapshot(), deps.config.sync.id);
  const actionOf = new Map<Change, OwnershipAction>();
  changes.forEach((c, i) => actionOf.set(c, actions[i]!));
  const settings = applyOptionsFrom(deps.config);
  const refresh = refreshOptionsFrom(deps.config);
  const { client, mirror, ownership, logger, clock, trust } = deps;
  const result = await applyChanges(
    changes,
    { client, mirror, ownership, logger, clock, trust, syncId: settings.syncId, adopt: settings.adopt, refresh: (entities) => refreshStage(deps, refresh, { entities }) },
    {
      concurrency: settings.concurrency,
      // The first failure stops the command, as it did when the command wrote the changes itself.
      maxFailures: 1,
      dryRun,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.abortSignal ? { abort: deps.abortSignal } : {}),
      ...(deps.writeGates ? { gates: deps.writeGates } : {}),
      onResult: (r) => {
        const a = actionOf.get(r.change);
        if (a && (r.status === 'applied' || r.status === 'adopted')) onDone?.(a);
      },
    },
  );
  const failure = ownershipFailure(result, actionOf);
  if (failure) throw failure;
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
