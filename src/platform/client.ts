/**
 * The typed client of the platform's organisation API, in layers (docs/architecture.md, "The platform client"):
 * concurrency bound -> pacing (the credential's token bucket, paused by 429) -> one HTTP attempt over a keep-alive
 * undici Agent with a timeout -> error mapping (./errors.ts) -> zod validation of the body (./schemas.ts),
 * wrapped in the retry policy of ./retry.ts.
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { Agent } from './undici-agent.js';
import { onAbort } from '../shared/abort-waiters.js';
import type { z } from 'zod';
import type { PlatformConfig } from '../config/platform.js';
import { formatPath } from '../config/zod-errors.js';
import type { EntityKind, ListPage, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/entities.js';
import { monotonicNow, systemClock, type Clock } from '../shared/clock.js';
import { OrgsyncError } from '../shared/errors.js';
import { errorFromResponse, isPlatformError, parseRetryAfter, platformError, type CredentialRef, type PlatformError, type RequestTarget } from './errors.js';
import { KeyPool, namesTenant, type PoolKey } from './key-pool.js';
import { Semaphore, type TokenBucket } from './pacing.js';
import type {
  CallOptions,
  ClientObserver,
  CreateDepartmentBody,
  CreateMemberBody,
  CreatePositionBody,
  EntityRecords,
  ListParams,
  OrgPlatformPort,
  PatchDepartmentBody,
  PatchMemberBody,
  PatchPositionBody,
} from './port.js';
import { DEFAULT_RETRY_POLICY, nextDelay, retryReason, type RetryPolicy } from './retry.js';
import { departmentSchema, listPageSchema, memberSchema, positionSchema } from './schemas.js';

/** The path prefix of every business call. */
export const API_PREFIX = '/api/external/v1';

/** Bounded route templates (metric labels and error messages; never ids). */
export const ROUTES = {
  departments: '/org/departments',
  department: '/org/departments/{department_id}',
  members: '/org/members',
  member: '/org/members/{account_id}',
  positions: '/org/positions',
  position: '/org/positions/{position_id}',
} as const;

/** Options of a PlatformClient. */
export interface PlatformClientOptions {
  /** e.g. http://127.0.0.1:8080; /api/external/v1/... is appended. */
  baseUrl: string;
  /** The bearer credential (ek_ key or st_ token). */
  credential: string;
  /**
   * More credentials of the same tenant (platform.api_keys): requests are spread over `credential` and these, each
   * paced at `requestsPerSecond`, all together at most `tenantRequestsPerSecond` (./key-pool.ts).
   */
  moreCredentials?: readonly string[];
  /**
   * Where each credential (`credential`, then `moreCredentials`) is configured and read from, for the message of a
   * refused key: `{ setting: 'platform.api_keys[1]', from: '$HR_KEY_2' }`. createPlatformClient fills it from the config.
   */
  credentialSources?: readonly ({ setting: string; from?: string } | undefined)[];
  /** Pacing rate of each credential (platform.requests_per_second). */
  requestsPerSecond: number;
  /** The share of the tenant's budget for all credentials together (default: no bound beyond the keys' own). */
  tenantRequestsPerSecond?: number;
  /** Tokens spendable at once after idling (default 1). */
  burst?: number;
  /** Requests in flight at once (platform.concurrency). */
  concurrency: number;
  /** Per-attempt timeout in ms (platform.timeout_ms). */
  timeoutMs: number;
  /** Retry bounds (platform.max_attempts, platform.max_retry_time_ms); the backoff's delays keep DEFAULT_RETRY_POLICY's unless given. */
  retry: Pick<RetryPolicy, 'maxAttempts' | 'maxRetryTimeMs'> & Partial<RetryPolicy>;
  clock?: Clock;
  /** Uniform random source in [0, 1) for jitter (tests pass a fixed one). */
  random?: () => number;
  /** An undici dispatcher to use instead of the client's own keep-alive Agent (tests: MockAgent). Not closed by close(). */
  dispatcher?: Dispatcher;
  /** A token bucket to use instead of the process-wide one of this credential (one credential only). */
  bucket?: TokenBucket;
  observer?: ClientObserver;
  userAgent?: string;
}

const listSchemas = {
  departments: listPageSchema(departmentSchema),
  members: listPageSchema(memberSchema),
  positions: listPageSchema(positionSchema),
} as const;

/** Transport failures that are worth a retry (documentation of what 'network' covers). */
export const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  route: string;
  path: string;
  query?: ListParams;
  body?: unknown;
  /** Add the response's `Date` header to the parsed object as `server_time` (list pages). */
  serverTime?: boolean;
}

/** What one HTTP attempt got back: status, body text and the headers the client reads. */
interface Answer {
  status: number;
  text: string;
  retryAfter: string | string[] | undefined;
  date: string | string[] | undefined;
}

/** The real platform client. One instance per credential and base URL; close() when done. */
export class PlatformClient implements OrgPlatformPort {
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly keys: KeyPool;
  private readonly inflight: Semaphore;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
  private readonly observer: ClientObserver;
  private readonly headers: Record<string, string>;
  private readonly headersByKey = new WeakMap<PoolKey, { plain: Record<string, string>; json: Record<string, string> }>();
  private readonly baseUrl: string;
  private readonly sources = new Map<string, { setting: string; from?: string }>();

  constructor(options: PlatformClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl;
    const credentials = [options.credential, ...(options.moreCredentials ?? [])];
    credentials.forEach((c, i) => {
      const source = options.credentialSources?.[i];
      if (source && !this.sources.has(c)) this.sources.set(c, source);
    });
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '') + API_PREFIX;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.timeoutMs = options.timeoutMs;
    const concurrency = options.concurrency;
    this.inflight = new Semaphore(concurrency);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.observer = options.observer ?? {};
    this.keys = new KeyPool(this.clock, [options.credential, ...(options.moreCredentials ?? [])], {
      ratePerSecond: options.requestsPerSecond,
      burst: options.burst ?? 1,
      ...(options.tenantRequestsPerSecond !== undefined ? { tenantRatePerSecond: options.tenantRequestsPerSecond } : {}),
      ...(options.bucket ? { bucket: options.bucket } : {}),
    });
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        connections: concurrency,
        keepAliveTimeout: 30_000,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        connect: { timeout: this.timeoutMs },
      });
    this.headers = {
      accept: 'application/json',
      'user-agent': options.userAgent ?? 'orgsync',
    };
  }

  /** The fingerprints of the keys still in use (dropped ones left out), in configuration order. */
  activeKeys(): string[] {
    return this.keys.active().map((k) => k.fingerprint);
  }

  /** Puts back every key dropped after a refusal: a new run tries each configured key again. */
  restoreKeys(): void {
    this.keys.restore();
  }

  /** Closes the keep-alive connections (when the client created them). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  listPage<K extends EntityKind>(entity: K, params: ListParams, options?: CallOptions): Promise<ListPage<EntityRecords[K]>> {
    const route = ROUTES[entity];
    return this.call({ method: 'GET', route, path: route, query: params, serverTime: true }, listSchemas[entity], options) as Promise<ListPage<EntityRecords[K]>>;
  }

  listDepartments(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformDepartment>> {
    return this.listPage('departments', params, options);
  }
  getDepartment(id: string, options?: CallOptions): Promise<PlatformDepartment> {
    return this.call({ method: 'GET', route: ROUTES.department, path: byId(ROUTES.departments, id) }, departmentSchema, options);
  }
  createDepartment(body: CreateDepartmentBody, options?: CallOptions): Promise<PlatformDepartment> {
    return this.call({ method: 'POST', route: ROUTES.departments, path: ROUTES.departments, body }, departmentSchema, options);
  }
  patchDepartment(id: string, body: PatchDepartmentBody, options?: CallOptions): Promise<PlatformDepartment> {
    return this.call({ method: 'PATCH', route: ROUTES.department, path: byId(ROUTES.departments, id), body }, departmentSchema, options);
  }
  async deleteDepartment(id: string, options?: CallOptions): Promise<void> {
    await this.call({ method: 'DELETE', route: ROUTES.department, path: byId(ROUTES.departments, id) }, undefined, options);
  }

  listMembers(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformMember>> {
    return this.listPage('members', params, options);
  }
  getMember(accountId: string, options?: CallOptions): Promise<PlatformMember> {
    return this.call({ method: 'GET', route: ROUTES.member, path: byId(ROUTES.members, accountId) }, memberSchema, options);
  }
  createMember(body: CreateMemberBody, options?: CallOptions): Promise<PlatformMember> {
    return this.call({ method: 'POST', route: ROUTES.members, path: ROUTES.members, body }, memberSchema, options);
  }
  patchMember(accountId: string, body: PatchMemberBody, options?: CallOptions): Promise<PlatformMember> {
    return this.call({ method: 'PATCH', route: ROUTES.member, path: byId(ROUTES.members, accountId), body }, memberSchema, options);
  }
  async deleteMember(accountId: string, options?: CallOptions): Promise<void> {
    await this.call({ method: 'DELETE', route: ROUTES.member, path: byId(ROUTES.members, accountId) }, undefined, options);
  }

  listPositions(params: ListParams, options?: CallOptions): Promise<ListPage<PlatformPosition>> {
    return this.listPage('positions', params, options);
  }
  getPosition(id: string, options?: CallOptions): Promise<PlatformPosition> {
    return this.call({ method: 'GET', route: ROUTES.position, path: byId(ROUTES.positions, id) }, positionSchema, options);
  }
  createPosition(body: CreatePositionBody, options?: CallOptions): Promise<PlatformPosition> {
    return this.call({ method: 'POST', route: ROUTES.positions, path: ROUTES.positions, body }, positionSchema, options);
  }
  patchPosition(id: string, body: PatchPositionBody, options?: CallOptions): Promise<PlatformPosition> {
    return this.call({ method: 'PATCH', route: ROUTES.position, path: byId(ROUTES.positions, id), body }, positionSchema, options);
  }
  async deletePosition(id: string, options?: CallOptions): Promise<void> {
    await this.call({ method: 'DELETE', route: ROUTES.position, path: byId(ROUTES.positions, id) }, undefined, options);
  }

  /** One logical call: attempts under the retry policy. */
  private async call<S extends z.ZodType>(spec: RequestSpec, schema: S, options?: CallOptions): Promise<z.infer<S>>;
  private async call(spec: RequestSpec, schema: undefined, options?: CallOptions): Promise<undefined>;
  private async call(spec: RequestSpec, schema: z.ZodType | undefined, options?: CallOptions): Promise<unknown> {
    const signal = options?.signal;
    // Durations (the retry budget, request times) are monotonic: a stepped wall clock neither ends nor extends them.
    const started = monotonicNow(this.clock);
    for (let attempt = 1; ; attempt += 1) {
      let failure: PlatformError;
      // Set before any attempt; a failure without a key (an abort while waiting) is no PlatformError and is rethrown.
      let key!: PoolKey;
      const release = await this.inflight.acquire();
      try {
        const slot = await this.keys.acquire(signal);
        key = slot.key;
        if (slot.waited > 0) this.observer.onThrottled?.(slot.waited / 1000);
        options?.beforeAttempt?.();
        this.observer.onKeyRequest?.(key.fingerprint);
        return await this.attempt(spec, schema, signal, key);
      } catch (err) {
        if (!isPlatformError(err)) throw err;
        failure = err;
        if (failure.kind === 'unauthorized' || failure.kind === 'scope_denied') failure.credential = this.credentialRef(key);
      } finally {
        release();
      }
      // A key the platform refuses is dropped and the request goes to another key (not counted as an attempt);
      // the last key's refusal is the caller's, as with one key (the applier stops: credential_refused, scope_denied).
      if (failure.kind === 'unauthorized' || failure.kind === 'scope_denied') {
        const dropped = this.keys.drop(key);
        if (dropped === 'dropped') this.observer.onKeyDropped?.(key.fingerprint, failure.status, failure.code);
        if (dropped !== 'last') {
          attempt -= 1;
          continue;
        }
      }
      const delay = nextDelay(this.policy, failure, attempt, monotonicNow(this.clock) - started, this.random);
      if (failure.status === 429) {
        this.observer.onRateLimited?.();
        this.observer.onKeyRateLimited?.(key.fingerprint);
        // The pause holds every request of this key, or of every key when the tenant's limit was hit (even when
        // this one gives up); a retry then waits for a slot like any other request.
        this.keys.rateLimited(key, delay ?? failure.retryAfterMs ?? this.policy.baseDelayMs, namesTenant(failure.message));
      }
      if (delay === undefined || options?.noRetry?.aborted) throw failure;
      this.observer.onRetry?.(retryReason(failure)!);
      if (failure.status !== 429 && delay > 0) await this.backoff(delay, signal, options?.noRetry, failure);
      if (options?.noRetry?.aborted) throw failure;
    }
  }

  /** Which key a request went with, as a refusal's message names it (never the key itself). */
  private credentialRef(key: PoolKey): CredentialRef {
    return { baseUrl: this.baseUrl, fingerprint: key.fingerprint, ...this.sources.get(key.credential) };
  }

  /** Waits out a backoff; ends early (throwing `failure`) when `noRetry` fires, or the abort reason on `signal`. */
  private async backoff(ms: number, signal: AbortSignal | undefined, noRetry: AbortSignal | undefined, failure: PlatformError): Promise<void> {
    if (!noRetry) return this.clock.sleep(ms, signal);
    const both = signal ? AbortSignal.any([signal, noRetry]) : noRetry;
    try {
      await this.clock.sleep(ms, both);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw failure;
    }
  }

  /** The request headers of `key`, with or without a JSON content type (built once per key). */
  private headersOf(key: PoolKey, json: boolean): Record<string, string> {
    let h = this.headersByKey.get(key);
    if (!h) {
      const plain = { authorization: `Bearer ${key.credential}`, ...this.headers };
      h = { plain, json: { ...plain, 'content-type': 'application/json' } };
      this.headersByKey.set(key, h);
    }
    return json ? h.json : h.plain;
  }

  /** One HTTP attempt, mapped to a value or a PlatformError. */
  private async attempt(spec: RequestSpec, schema: z.ZodType | undefined, signal: AbortSignal | undefined, key: PoolKey): Promise<unknown> {
    const target: RequestTarget = { method: spec.method, route: spec.route, url: this.origin + this.basePath + spec.path };
    // The same header objects for every request of a key (undici only reads them): a copy per request was allocated
    // in the old generation at thousands of requests a second (issue 19).
    let headers = this.headersOf(key, false);
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers = this.headersOf(key, true);
    }
    if (signal?.aborted) throw signal.reason;
    // One abort per attempt, fired by the timeout or the caller's signal; both are detached when the attempt
    // ends, so a long-lived shutdown signal collects no listeners across thousands of requests. A plain emitter (undici
    // takes one as `signal`), not an AbortController: at thousands of requests a second, each controller's EventTarget
    // outlived the young generation and was the largest share of the old-space garbage of an initial sync.
    const controller = new AttemptAbort();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    const leave = signal ? onAbort(signal, () => controller.abort(signal.reason)) : undefined;
    const t0 = monotonicNow(this.clock);
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    let date: string | string[] | undefined;
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: this.basePath + spec.path + queryString(spec.query),
        method: spec.method,
        headers,
        body,
        signal: controller,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      date = res.headers.date;
      text = await res.body.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw this.transportError(target, err, timedOut);
    } finally {
      clearTimeout(timer);
      leave?.();
    }
    this.observer.onResponse?.(spec.method, spec.route, status, (monotonicNow(this.clock) - t0) / 1000);
    return this.readAnswer(spec, schema, target, { status, text, retryAfter, date });
  }

  /** An answer as a value: an error status or envelope becomes a PlatformError, a 2xx body is validated by `schema`. */
  private readAnswer(spec: RequestSpec, schema: z.ZodType | undefined, target: RequestTarget, answer: Answer): unknown {
    const { status, text } = answer;
    let json: unknown;
    let jsonError: unknown;
    if (text !== '') {
      try {
        json = JSON.parse(text);
      } catch (err) {
        jsonError = err;
      }
    }
    if (status < 200 || status >= 300) {
      throw errorFromResponse(target, status, json, parseRetryAfter(answer.retryAfter, this.clock.now()));
    }
    if (json && typeof json === 'object' && (json as { success?: unknown }).success === false) {
      // A shape-1 envelope reporting failure under a 2xx status.
      throw errorFromResponse(target, status, json, undefined);
    }
    if (schema === undefined) return undefined;
    if (jsonError !== undefined || text === '') {
      throw platformError({ kind: 'invalid_response', message: `${spec.method} ${spec.route}: ${status} with a body that is not JSON`, status, cause: jsonError, ...target });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
      const field = formatPath(issue.path);
      throw platformError({
        kind: 'invalid_response',
        message: `${spec.method} ${spec.route}: invalid response: ${field}: ${missing ? 'required field missing' : issue.message}`,
        status,
        code: field,
        ...target,
      });
    }
    if (spec.serverTime) {
      const date = answer.date;
      const serverTime = Date.parse(Array.isArray(date) ? date[0]! : (date ?? ''));
      if (Number.isFinite(serverTime)) return { ...(parsed.data as object), server_time: new Date(serverTime).toISOString() };
    }
    return parsed.data;
  }

  private transportError(target: RequestTarget, err: unknown, timedOut: boolean): PlatformError {
    const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code ?? '';
    const isTimeout = timedOut || TIMEOUT_CODES.has(code) || e.name === 'TimeoutError';
    // Anything else that prevented an answer (reset, refused, socket closed: NETWORK_CODES and the like) is a network error.
    const kind = isTimeout ? 'timeout' : 'network';
    const what = isTimeout ? `timed out after ${this.timeoutMs} ms` : `network error${code ? ` ${code}` : ''}: ${e.message ?? String(err)}`;
    return platformError({ kind, message: `${target.method} ${target.route}: ${what}`, status: 0, code, cause: err, ...target });
  }
}

/** The abort of one attempt, as undici's EventEmitter-shaped `signal` (`aborted`, `reason`, an `abort` event). */
class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

function byId(collection: string, id: string): string {
  return `${collection}/${encodeURIComponent(id)}`;
}

function queryString(query: ListParams | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  if (query.cursor) params.set('cursor', query.cursor);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.updated_since) params.set('updated_since', query.updated_since);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The limits of the client from the `platform:` block: pacing per key, requests in flight, timeout and retry bounds. */
export function clientLimitsFrom(config: Pick<PlatformConfig, 'requests_per_second' | 'concurrency' | 'timeout_ms' | 'max_attempts' | 'max_retry_time_ms'>): Pick<PlatformClientOptions, 'requestsPerSecond' | 'concurrency' | 'timeoutMs' | 'retry'> {
  return { requestsPerSecond: config.requests_per_second, concurrency: config.concurrency, timeoutMs: config.timeout_ms, retry: { maxAttempts: config.max_attempts, maxRetryTimeMs: config.max_retry_time_ms } };
}

/**
 * Builds the client from the `platform:` config block: its keys are `api_key` and every `api_keys` entry (a key
 * given twice counts once), each with the setting it came from and, from the loader's `key_origins`, where it was
 * read. No key at all is a config error naming `configFile` (the config file's path, when known).
 */
export function createPlatformClient(
  config: PlatformConfig,
  deps: Pick<PlatformClientOptions, 'clock' | 'random' | 'dispatcher' | 'observer' | 'bucket'> = {},
  configFile?: string,
): PlatformClient {
  const settings: [string, string][] = [];
  if (config.api_key) settings.push([config.api_key, 'platform.api_key']);
  (config.api_keys ?? []).forEach((k, i) => settings.push([k.key, `platform.api_keys[${i}]`]));
  const first = new Map<string, string>();
  for (const [key, setting] of settings) if (!first.has(key)) first.set(key, setting);
  const keys = [...first.keys()];
  if (keys.length === 0) {
    throw new OrgsyncError('CONFIG_INVALID', `${configFile ? `${configFile}: ` : ''}platform.api_key: required (or platform.api_key_file)`);
  }
  const sources = [...first.values()].map((setting) => {
    const from = config.key_origins?.[setting];
    return from === undefined ? { setting } : { setting, from };
  });
  return new PlatformClient({
    baseUrl: config.base_url,
    credential: keys[0]!,
    moreCredentials: keys.slice(1),
    credentialSources: sources,
    tenantRequestsPerSecond: config.tenant_requests_per_second,
    ...clientLimitsFrom(config),
    ...deps,
  });
}
