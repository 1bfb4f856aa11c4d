/**
 * Notifications (issue 20): webhooks told about refused, failed and partial runs, pending approvals and recoveries.
 * Fire and forget: `notify` queues and returns at once; one worker per webhook POSTs in order, retrying with backoff;
 * a bounded queue drops the oldest event when a webhook stays down, so a dead endpoint costs memory for 100 events
 * and delays no run. Bodies pass through the shared redactor and carry no secret; the webhook's own secret only keys
 * the HMAC-SHA256 signature header.
 */
import { createHmac } from 'node:crypto';
import type { NotifyConfig, NotifyEventKind, WebhookConfig } from '../../config/notify.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { maskContactsInText } from '../../shared/personal.js';
import { redact } from '../../shared/redact.js';

/** One event, as every format renders it. */
export interface NotifyEvent {
  event: NotifyEventKind;
  syncId: string;
  runId: string | null;
  /** RFC 3339. */
  at: string;
  /** The run's result (refused, failed, partial, applied, in_sync, ...). */
  result: string;
  exitCode: number;
  /** Planned and applied changes per entity and operation; failures, quarantined and blocked records. */
  counts: { planned: Record<string, Record<string, number>>; applied: Record<string, Record<string, number>>; failures: number; quarantined: number; blocked: number };
  guard: string | null;
  /** The pending approval's digest (refused, pending_approval) or the approval a run used. */
  digest: string | null;
  /** The refusal or error message. */
  message: string | null;
}

/** The JSON body of a `format: json` webhook. */
export function eventJson(e: NotifyEvent): Record<string, unknown> {
  return {
    event: e.event,
    sync_id: e.syncId,
    run_id: e.runId,
    at: e.at,
    result: e.result,
    exit_code: e.exitCode,
    counts: e.counts,
    guard: e.guard,
    digest: e.digest,
    // Webhooks carry no person (issue 44): an e-mail or phone quoted by an error is masked.
    message: e.message === null ? null : maskContactsInText(redact(e.message)),
  };
}

const total = (m: Record<string, Record<string, number>>, op?: string): number =>
  Object.values(m).reduce((n, ops) => n + Object.entries(ops).reduce((k, [o, v]) => k + (op === undefined || o === op ? v : 0), 0), 0);

/** The Slack message of an event: one short summary with the counts. */
export function eventSlack(e: NotifyEvent): { text: string } {
  const head: Record<NotifyEventKind, string> = {
    refused: `:no_entry: orgsync ${e.syncId}: run refused${e.guard ? ` by ${e.guard}` : ''}`,
    pending_approval: `:hourglass: orgsync ${e.syncId}: plan ${e.digest ?? ''} waits for approval${e.guard ? ` (${e.guard})` : ''}`,
    failed: `:x: orgsync ${e.syncId}: run failed`,
    partial: `:warning: orgsync ${e.syncId}: run finished with problems`,
    recovered: `:white_check_mark: orgsync ${e.syncId}: runs succeed again`,
  };
  const counts = `planned ${total(e.counts.planned)} (create ${total(e.counts.planned, 'create')}, update ${total(e.counts.planned, 'update')}, remove ${total(e.counts.planned, 'remove')}), applied ${total(e.counts.applied)}, failed ${e.counts.failures}, quarantined ${e.counts.quarantined}, blocked ${e.counts.blocked}`;
  const lines = [head[e.event], counts];
  if (e.message) lines.push(maskContactsInText(redact(e.message)).slice(0, 600));
  if (e.digest && (e.event === 'refused' || e.event === 'pending_approval')) lines.push(`review: orgsync approvals show ${e.digest} --output html; approve: sync.approve: [${e.digest}]`);
  if (e.runId) lines.push(`run ${e.runId}`);
  return { text: lines.join('\n') };
}

/** The HMAC-SHA256 signature header value of a body. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Tuning of the workers (tests shorten it). */
export interface NotifierOptions {
  clock: Clock;
  logger: Logger;
  /** Attempts per event (default 5), the first backoff (default 1 s, doubled each time) and the request timeout (10 s). */
  attempts?: number;
  backoffMs?: number;
  timeoutMs?: number;
  /** Events held per webhook (default 100); the oldest is dropped past it. */
  queueSize?: number;
}

/** Sends events to the configured webhooks. */
export interface Notifier {
  /** Queues the event for every webhook subscribed to it; returns at once. */
  notify(event: NotifyEvent): void;
  /** Waits until the queues are empty or `ms` passed (the end of a `sync`); never throws. */
  flush(ms: number): Promise<void>;
  /** Stops the workers; a request in flight is aborted. */
  close(): void;
}

class WebhookWorker {
  private readonly queue: NotifyEvent[] = [];
  private running = false;
  private idle: (() => void)[] = [];
  constructor(
    private readonly hook: WebhookConfig,
    private readonly opts: Required<Omit<NotifierOptions, 'clock' | 'logger'>> & Pick<NotifierOptions, 'clock' | 'logger'>,
    private readonly stop: AbortSignal,
  ) {}

  push(e: NotifyEvent): void {
    if (!this.hook.events.includes(e.event)) return;
    if (this.queue.length >= this.opts.queueSize) {
      const dropped = this.queue.shift()!;
      this.opts.logger.warn({ webhook: redact(this.hook.url), event: dropped.event }, 'notification dropped: the webhook queue is full (the webhook is down or slow)');
    }
    this.queue.push(e);
    if (!this.running) void this.run();
  }

  empty(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.stop.aborted) await this.send(this.queue.shift()!);
    } finally {
      this.running = false;
      for (const r of this.idle.splice(0)) r();
    }
  }

  private async send(e: NotifyEvent): Promise<void> {
    const body = JSON.stringify(this.hook.format === 'slack' ? eventSlack(e) : eventJson(e));
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'orgsync', 'x-orgsync-event': e.event };
    if (this.hook.secret) headers['x-orgsync-signature'] = signature(this.hook.secret, body);
    let wait = this.opts.backoffMs;
    for (let attempt = 1; attempt <= this.opts.attempts && !this.stop.aborted; attempt += 1) {
      let problem: string;
      try {
        const res = await fetch(this.hook.url, { method: 'POST', headers, body, signal: AbortSignal.any([this.stop, AbortSignal.timeout(this.opts.timeoutMs)]) });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return;
        problem = `HTTP ${res.status}`;
        if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) attempt = this.opts.attempts;
      } catch (err) {
        problem = (err as Error).name === 'TimeoutError' ? 'timed out' : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
      }
      if (attempt >= this.opts.attempts || this.stop.aborted) {
        this.opts.logger.warn({ webhook: redact(this.hook.url), event: e.event, attempts: attempt, error: redact(problem) }, 'notification not delivered');
        return;
      }
      await this.opts.clock.sleep(wait, this.stop).catch(() => undefined);
      wait *= 2;
    }
  }
}

/** A notifier for `config.webhooks` (none: a notifier that does nothing). */
export function createNotifier(config: NotifyConfig, options: NotifierOptions): Notifier {
  const stop = new AbortController();
  const opts = { attempts: 5, backoffMs: 1000, timeoutMs: 10_000, queueSize: 100, ...options };
  const workers = config.webhooks.map((h) => new WebhookWorker(h, opts, stop.signal));
  return {
    notify(event) {
      for (const w of workers) w.push(event);
    },
    async flush(ms) {
      if (workers.length === 0) return;
      const timer = new AbortController();
      await Promise.race([Promise.all(workers.map((w) => w.empty())), options.clock.sleep(ms, timer.signal).catch(() => undefined)]);
      timer.abort();
    },
    close() {
      stop.abort();
    },
  };
}
