/**
 * Stage options from the config: one named builder per option set, and the one file downstream of src/config/ that
 * reads config values (the composition root in src/app/ and every stage of the pipeline build their options here,
 * so a default or a unit is decided in one place; `apply FILE`'s plan once lacked the delete threshold).
 */
import { resolveConfigPath } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { ApplyOptions } from '../../applier/index.js';
import { lifecycleOptionsFrom, type PlanOptions } from '../../planner/index.js';

/** How the mirror is refreshed (src/daemon/refresh-mirror.ts). */
export interface RefreshSettings {
  overlapSeconds: number;
  fullWalkEveryMs: number;
}

/** The mirror refresh's options. */
export function refreshOptionsFrom(config: Pick<Config, 'state'>): RefreshSettings {
  return { overlapSeconds: config.state.mirror_overlap_seconds, fullWalkEveryMs: config.state.full_walk_every };
}

/** The planner's options of every run, without the run's own (`now`, `--allow-deletes`, trust, state known). */
export type PlanSettings = Omit<PlanOptions, 'now' | 'allowDeletes' | 'trust' | 'stateKnown'>;

/** The planner's options (`sync` runs, saved plans, approvals and re-plans plan the same way). */
export function planOptionsFrom(config: Pick<Config, 'sync'>): PlanSettings {
  const sync = config.sync;
  return {
    syncId: sync.id,
    policy: sync.policy,
    memberRemoval: sync.member_removal,
    deleteThreshold: sync.delete_threshold,
    adopt: sync.adopt,
    lifecycle: lifecycleOptionsFrom(sync),
    ...(sync.root_department !== undefined ? { rootDepartment: sync.root_department } : {}),
  };
}

/** The applier's options and the sync facts it needs (ApplierDeps' `syncId` and `adopt`). */
export interface ApplySettings {
  syncId: string;
  adopt: Config['sync']['adopt'];
  concurrency: number;
  maxFailures: number;
}

/** The applier's options. */
export function applyOptionsFrom(config: Pick<Config, 'sync' | 'platform'>): ApplySettings & Pick<ApplyOptions, 'concurrency' | 'maxFailures'> {
  return { syncId: config.sync.id, adopt: config.sync.adopt, concurrency: config.platform.concurrency, maxFailures: config.sync.max_failures };
}

/** How a run ends: re-plan rounds and the exit code of a run whose only problem is quarantined records. */
export interface SettleSettings {
  maxReplanRounds: number;
  exitCodeOnQuarantine: 0 | 4;
}

/** The settle stage's options. */
export function settleOptionsFrom(config: Pick<Config, 'sync'>): SettleSettings {
  return { maxReplanRounds: config.sync.max_replan_rounds, exitCodeOnQuarantine: config.sync.exit_code_on_quarantine };
}

/** Every stage's options of a run, built once at its start. */
export interface RunSettings {
  syncId: string;
  refresh: RefreshSettings;
  plan: PlanSettings;
  apply: ApplySettings;
  settle: SettleSettings;
  /** The digests `sync.approve` approves. */
  approve: readonly string[];
}

/** Every stage's options of a run. */
export function runSettingsFrom(config: Pick<Config, 'sync' | 'state' | 'platform'>): RunSettings {
  return {
    syncId: config.sync.id,
    refresh: refreshOptionsFrom(config),
    plan: planOptionsFrom(config),
    apply: applyOptionsFrom(config),
    settle: settleOptionsFrom(config),
    approve: config.sync.approve,
  };
}

/** The state DB: where it is and how long to wait for it. */
export interface StateDbSettings {
  path: string;
  busyTimeoutMs: number;
  leaseTtlMs: number;
  /** Record history kept this many days (state.history_days). */
  historyDays: number;
}

/** The state DB's options. */
export function stateDbOptionsFrom(config: Config): StateDbSettings {
  return {
    path: resolveConfigPath(config, config.state.path),
    busyTimeoutMs: config.state.busy_timeout,
    leaseTtlMs: config.state.lease_ttl,
    historyDays: config.state.history_days,
  };
}

/** How long requests in flight may go on after a shutdown signal (shutdown_timeout). */
export function shutdownTimeoutMsFrom(config: Pick<Config, 'shutdown_timeout'>): number {
  return config.shutdown_timeout;
}

/** The logger's options from `log:` (the destination and the terminal are the caller's). */
export function logOptionsFrom(config: Pick<Config, 'log' | 'meta' | 'sync'>): { level: Config['log']['level']; format: Config['log']['format']; secrets: Config['meta']['secrets']; redactPaths: Config['log']['redact']; base: { sync_id: string }; personalData: boolean } {
  return { level: config.log.level, format: config.log.format, secrets: config.meta.secrets, redactPaths: config.log.redact, base: { sync_id: config.sync.id }, personalData: config.log.personal_data };
}

/** What `orgsync daemon` needs besides the run: schedule, listener, trigger token file, shutdown grace. */
export interface DaemonSettings {
  syncId: string;
  schedule: string;
  timezone: string;
  listen: string;
  /** daemon.trigger_token_file, resolved against the config file; undefined: no trigger endpoints. */
  triggerTokenFile: string | undefined;
  shutdownGraceMs: number;
}

/** The daemon's options. */
export function daemonOptionsFrom(config: Config): DaemonSettings {
  return {
    syncId: config.sync.id,
    schedule: config.schedule,
    timezone: config.timezone,
    listen: config.metrics.listen,
    triggerTokenFile: config.daemon.trigger_token_file === '' ? undefined : resolveConfigPath(config, config.daemon.trigger_token_file),
    shutdownGraceMs: shutdownTimeoutMsFrom(config),
  };
}
