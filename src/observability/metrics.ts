import { Counter, Gauge, Histogram, Pushgateway, Registry, collectDefaultMetrics } from 'prom-client';
import { redact } from '../shared/redact.js';

/** Every metric orgsync exports starts with this. */
export const METRIC_PREFIX = 'orgsync_';

/** The results a run can end with (the `result` label of orgsync_runs_total). */
export const RUN_RESULTS = ['success', 'partial', 'failed', 'guard', 'interrupted', 'dry_run'] as const;
/** How a run ended, as the `result` label says it. */
export type RunResult = (typeof RUN_RESULTS)[number];

/** The entities orgsync syncs (the `entity` label). */
export const ENTITIES = ['departments', 'positions', 'members'] as const;

/** A count by label values, e.g. plan operations by entity and op. */
export interface LabelledCount<L extends string> {
  labels: Record<L, string>;
  value: number;
}

/** What the mirror reports at scrape time: its watermarks and record counts. */
export interface MirrorProbe {
  /** Watermark (ms since the epoch) per entity, or undefined when none yet. */
  watermarks(): Record<string, number | undefined>;
  /** Record counts by entity and status. */
  records(): { entity: string; status: string; count: number }[];
}

/**
 * The platform client's hooks (src/platform's ClientObserver), implemented on these metrics. Declared here
 * structurally because observability/ does not import platform/.
 */
export interface ClientMetricsObserver {
  onResponse(method: string, route: string, status: number, seconds: number): void;
  onRetry(reason: string): void;
  onRateLimited(): void;
  onThrottled(seconds: number): void;
  /** `key`: a key fingerprint (first 8 hex of its SHA-256), never the key. */
  onKeyRequest(key: string): void;
  onKeyRateLimited(key: string): void;
  onKeyDropped(key: string): void;
}

/** Build facts for orgsync_build_info. */
export interface BuildInfo {
  version: string;
}

/**
 * orgsync's metrics on their own Registry (never the global one, so tests and several instances do not collide).
 * Names follow Prometheus conventions: `_total` counters, `_seconds` units, bounded labels (route templates, never ids).
 */
export class OrgsyncMetrics {
  /** The registry to serve or push. */
  readonly registry = new Registry();
  /** Where every metric below registers (field initializers run in order, after the registry). */
  private readonly registers = [this.registry];
  readonly buildInfo: Gauge<'version' | 'node_version'> = new Gauge({ name: `${METRIC_PREFIX}build_info`, help: 'Always 1; labels carry the orgsync version and the Node.js version.', labelNames: ['version', 'node_version'], registers: this.registers });
  readonly runsTotal: Counter<'result'> = new Counter({ name: `${METRIC_PREFIX}runs_total`, help: 'Sync runs by result (success, partial, failed, guard, interrupted, dry_run).', labelNames: ['result'], registers: this.registers });
  readonly runDurationSeconds: Histogram = new Histogram({
    name: `${METRIC_PREFIX}run_duration_seconds`,
    help: 'Wall time of a sync run.',
    buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600],
    registers: this.registers,
  });
  readonly lastRunTimestampSeconds: Gauge = new Gauge({ name: `${METRIC_PREFIX}last_run_timestamp_seconds`, help: 'Unix time at which the last run ended, whatever its result.', registers: this.registers });
  readonly lastSuccessTimestampSeconds: Gauge = new Gauge({ name: `${METRIC_PREFIX}last_success_timestamp_seconds`, help: 'Unix time at which the last successful run ended (result success or partial).', registers: this.registers });
  readonly planOperations: Gauge<'entity' | 'op'> = new Gauge({ name: `${METRIC_PREFIX}plan_operations`, help: 'Operations in the last plan by entity and op (create, adopt, update, move, remove).', labelNames: ['entity', 'op'], registers: this.registers });
  readonly operationsTotal: Counter<'entity' | 'op' | 'result'> = new Counter({ name: `${METRIC_PREFIX}operations_total`, help: 'Changes of applied plans by entity, op and result (applied, adopted, failed, conflict, skipped, skipped_admin, not_started, deferred).', labelNames: ['entity', 'op', 'result'], registers: this.registers });
  readonly apiRequestsTotal: Counter<'method' | 'route' | 'status'> = new Counter({ name: `${METRIC_PREFIX}api_requests_total`, help: 'Platform API responses by method, route template and status code.', labelNames: ['method', 'route', 'status'], registers: this.registers });
  readonly apiRequestDurationSeconds: Histogram<'method' | 'route'> = new Histogram({
    name: `${METRIC_PREFIX}api_request_duration_seconds`,
    help: 'Platform API request latency by method and route template.',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: this.registers,
  });
  readonly apiRateLimitedTotal: Counter = new Counter({ name: `${METRIC_PREFIX}api_rate_limited_total`, help: 'Platform API answers 429 (rate limited).', registers: this.registers });
  /** Issue 22: requests to the daemon's trigger endpoints refused for a missing or wrong bearer token. */
  readonly triggerUnauthorizedTotal: Counter = new Counter({ name: `${METRIC_PREFIX}trigger_unauthorized_total`, help: 'Requests to the daemon\'s trigger endpoints (POST /sync) refused with 401: no or a wrong bearer token.', registers: this.registers });
  /** Issue 29: requests to the listener's personal routes refused with 401, by route template. */
  readonly httpUnauthorizedTotal = new Counter({
    name: `${METRIC_PREFIX}http_unauthorized_total`,
    help: 'Requests to the listener\'s personal-data routes (/plan, /plan.json, /runs/<id>, /records/<selector>/history) refused with 401: no or a wrong read token.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly apiThrottledSecondsTotal: Counter = new Counter({ name: `${METRIC_PREFIX}api_throttled_seconds_total`, help: 'Time spent waiting on pacing and Retry-After.', registers: this.registers });
  readonly apiRetriesTotal: Counter<'reason'> = new Counter({ name: `${METRIC_PREFIX}api_retries_total`, help: 'Platform API request retries by reason (rate_limited, server, network, timeout).', labelNames: ['reason'], registers: this.registers });
  /** Requests sent per platform key (label `key`: its fingerprint, never the key). */
  readonly platformKeyRequestsTotal: Counter<'key'> = new Counter({
    name: `${METRIC_PREFIX}platform_key_requests_total`,
    help: 'Platform API requests sent per API key; the label key is the first 8 hex digits of the key\'s SHA-256, never the key.',
    labelNames: ['key'],
    registers: this.registers,
  });
  /** 429s per platform key. */
  readonly platformKeyRateLimitedTotal: Counter<'key'> = new Counter({ name: `${METRIC_PREFIX}platform_key_rate_limited_total`, help: 'Platform API answers 429 per API key (key fingerprint).', labelNames: ['key'], registers: this.registers });
  /** Keys dropped from a run after the platform refused them (401/403). */
  readonly platformKeyDroppedTotal: Counter<'key'> = new Counter({
    name: `${METRIC_PREFIX}platform_key_dropped_total`,
    help: 'API keys dropped from a run because the platform refused them (401, 403 scope_denied); the run goes on with the other keys.',
    labelNames: ['key'],
    registers: this.registers,
  });
  readonly mirrorWatermarkAgeSeconds: Gauge<'entity'> = new Gauge({
    name: `${METRIC_PREFIX}mirror_watermark_age_seconds`,
    help: 'Age of the mirror\'s incremental watermark per entity.',
    labelNames: ['entity'],
    registers: this.registers,
    collect: () => this.collectWatermarks(),
  });
  readonly removalsBlockedTotal: Counter<'guard'> = new Counter({ name: `${METRIC_PREFIX}removals_blocked_total`, help: 'Removals a guard kept from being applied, by guard.', labelNames: ['guard'], registers: this.registers });
  readonly guardRefusalsTotal: Counter<'guard'> = new Counter({
    name: `${METRIC_PREFIX}guard_refusals_total`,
    help: 'Runs (and plans) a guard refused, by guard (state_lost, empty_source, source_shrink, scope_change, delete_threshold).',
    labelNames: ['guard'],
    registers: this.registers,
  });
  readonly sourceRecords: Gauge<'source' | 'entity'> = new Gauge({ name: `${METRIC_PREFIX}source_records`, help: 'Records the last run read per source and entity.', labelNames: ['source', 'entity'], registers: this.registers });
  readonly quarantinedRecords: Gauge<'source' | 'reason'> = new Gauge({ name: `${METRIC_PREFIX}quarantined_records`, help: 'Records quarantined in the last run per source and reason.', labelNames: ['source', 'reason'], registers: this.registers });
  readonly blockedRecords: Gauge<'entity' | 'reason'> = new Gauge({
    name: `${METRIC_PREFIX}blocked_records`,
    help: 'Source records the last plan could neither create nor update, by entity and reason (not_owned_conflict, unpatchable_drift, contact_not_owned).',
    labelNames: ['entity', 'reason'],
    registers: this.registers,
  });
  readonly sourceWarnings: Gauge<'source' | 'code'> = new Gauge({ name: `${METRIC_PREFIX}source_warnings`, help: 'Values dropped from records the last run kept, per source and code (invalid_phone_dropped).', labelNames: ['source', 'code'], registers: this.registers });
  readonly lifecycleMembers: Gauge<'rule'> = new Gauge({
    name: `${METRIC_PREFIX}lifecycle_members`,
    help: 'Members a lifecycle rule applied to in the last plan: scheduled (start_date still ahead, not created yet) and ended (end_date passed).',
    labelNames: ['rule'],
    registers: this.registers,
  });
  readonly mirrorRecords: Gauge<'entity' | 'status'> = new Gauge({
    name: `${METRIC_PREFIX}mirror_records`,
    help: 'Records in the mirror by entity and status.',
    labelNames: ['entity', 'status'],
    registers: this.registers,
    collect: () => this.collectMirrorRecords(),
  });
  readonly pendingApproval: Gauge<'guard'> = new Gauge({
    name: `${METRIC_PREFIX}pending_approval`,
    help: 'Per guard: Unix time at which the oldest plan still waiting for approval was saved (no series when none waits); time() minus it is the age.',
    labelNames: ['guard'],
    registers: this.registers,
    collect: () => this.collectApprovals(),
  });
  private approvalsProbe: (() => readonly { guard: string; createdAtMs: number }[]) | undefined;
  readonly deleteThresholdExceededTotal: Counter = new Counter({ name: `${METRIC_PREFIX}delete_threshold_exceeded_total`, help: 'Runs refused because the plan\'s removals exceeded the delete threshold.', registers: this.registers });
  /** Applies that stopped starting writes, by reason (shutdown, lease_lost, state_unrecordable, ...). */
  readonly applyStopsTotal: Counter<'reason'> = new Counter({ name: `${METRIC_PREFIX}apply_stops_total`, help: 'Applies that stopped starting writes, by reason (shutdown, lease_lost, state_unrecordable, scope_denied, credential_refused).', labelNames: ['reason'], registers: this.registers });
  /** Runs that stopped because this process lost the state DB's lease (fencing). */
  readonly leaseLostTotal: Counter = new Counter({ name: `${METRIC_PREFIX}lease_lost_total`, help: 'Runs that stopped writing because this process no longer held the state DB lease (fencing).', registers: this.registers });

  private mirrorProbe: MirrorProbe | undefined;
  private readonly now: () => number;

  /**
   * `syncId`: the tenant's sync.id, set as the label `sync_id` on every metric (and the Pushgateway group), so one
   * Prometheus tells many tenants apart (the chart's dashboard and alerts group by it).
   */
  constructor(options: { build: BuildInfo; defaultMetrics?: boolean; now?: () => number; syncId?: string }) {
    if (options.syncId !== undefined) this.registry.setDefaultLabels({ sync_id: options.syncId });
    this.now = options.now ?? Date.now;
    this.buildInfo.set({ version: options.build.version, node_version: process.version }, 1);
    for (const result of RUN_RESULTS) this.runsTotal.inc({ result }, 0);
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
      // prom-client exports these three gauges with a _total suffix, which Prometheus reserves for counters
      // (promtool check metrics flags them); the per-type gauges without the suffix carry the same numbers.
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        this.registry.removeSingleMetric(`${METRIC_PREFIX}${name}`);
      }
    }
  }

  /** Lets the mirror report watermark ages and record counts at scrape time. */
  setMirrorProbe(probe: MirrorProbe | undefined): void {
    this.mirrorProbe = probe;
  }

  /** Lets the state DB report the pending approvals (issue 20) at scrape and push time. */
  setApprovalsProbe(probe: (() => readonly { guard: string; createdAtMs: number }[]) | undefined): void {
    this.approvalsProbe = probe;
  }

  private collectApprovals(): void {
    if (!this.approvalsProbe) return;
    const oldest = new Map<string, number>();
    for (const a of this.approvalsProbe()) oldest.set(a.guard, Math.min(oldest.get(a.guard) ?? Infinity, a.createdAtMs));
    OrgsyncMetrics.replace(this.pendingApproval, [...oldest].map(([guard, ms]) => ({ labels: { guard }, value: ms / 1000 })));
  }

  /** The platform client's observer, feeding the api_* metrics. */
  clientObserver(): ClientMetricsObserver {
    return {
      onResponse: (method, route, status, seconds) => {
        this.apiRequestsTotal.inc({ method, route, status: String(status) });
        this.apiRequestDurationSeconds.observe({ method, route }, seconds);
      },
      onRetry: (reason) => this.apiRetriesTotal.inc({ reason }),
      onRateLimited: () => this.apiRateLimitedTotal.inc(),
      onThrottled: (seconds) => {
        if (seconds > 0) this.apiThrottledSecondsTotal.inc(seconds);
      },
      onKeyRequest: (key) => this.platformKeyRequestsTotal.inc({ key }),
      onKeyRateLimited: (key) => this.platformKeyRateLimitedTotal.inc({ key }),
      onKeyDropped: (key) => this.platformKeyDroppedTotal.inc({ key }),
    };
  }

  /** Records the end of a run. */
  recordRun(result: RunResult, startedAtMs: number, finishedAtMs: number): void {
    this.runsTotal.inc({ result });
    // A dry run wrote nothing: it neither ends a failing streak nor starts one (the alerts compare these two gauges).
    if (result === 'dry_run') return;
    this.runDurationSeconds.observe(Math.max(0, (finishedAtMs - startedAtMs) / 1000));
    this.lastRunTimestampSeconds.set(finishedAtMs / 1000);
    if (result === 'success' || result === 'partial') this.lastSuccessTimestampSeconds.set(finishedAtMs / 1000);
  }

  /** Replaces a gauge's series with the given counts (the last run's picture, not a sum over runs). */
  static replace<L extends string>(gauge: Gauge<L>, counts: readonly LabelledCount<L>[]): void {
    gauge.reset();
    for (const { labels, value } of counts) gauge.set(labels as never, value);
  }

  /** The exposition text (what /metrics serves). */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * Pushes every metric to a Pushgateway (job `orgsync`, grouped by `instance` and `sync_id`, both the sync id),
   * replacing that group's previous push: each tenant keeps its own group.
   */
  async push(url: string, syncId: string): Promise<void> {
    // What is pushed passes the shared redactor, as what /metrics serves does (prom-client reads only metrics()).
    const redacted = { contentType: this.registry.contentType, metrics: async () => redact(await this.registry.metrics()) } as unknown as Registry;
    const gateway = new Pushgateway(url, { timeout: 10_000 }, redacted);
    await gateway.push({ jobName: 'orgsync', groupings: { instance: syncId, sync_id: syncId } });
  }

  private collectWatermarks(): void {
    const gauge = this.mirrorWatermarkAgeSeconds;
    gauge.reset();
    if (!this.mirrorProbe) return;
    try {
      const now = this.now();
      for (const [entity, watermark] of Object.entries(this.mirrorProbe.watermarks())) {
        if (watermark !== undefined) gauge.set({ entity }, Math.max(0, (now - watermark) / 1000));
      }
    } catch {
      // A closed or busy state DB must not break the scrape; the series are simply absent this time.
    }
  }

  private collectMirrorRecords(): void {
    const gauge = this.mirrorRecords;
    gauge.reset();
    if (!this.mirrorProbe) return;
    try {
      for (const { entity, status, count } of this.mirrorProbe.records()) gauge.set({ entity, status }, count);
    } catch {
      // As above: absent this scrape rather than a failed scrape.
    }
  }
}
