/**
 * Typed errors of the platform client. Both error shapes of the spec are parsed here:
 * shape 1 (envelope: success=false, numeric code 4010/4030/4040) and shape 2 ({ error: { code, message }, meta }).
 */
import { OrgsyncError } from '../shared/errors.js';
import { redactUrl } from '../shared/redact.js';
import { isNotTls } from '../shared/tls.js';

/** What went wrong, as a closed set the applier and the daemon can switch on. */
export type PlatformErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'scope_denied'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'server'
  | 'network'
  | 'timeout'
  | 'invalid_response';

/** Where a failed request went: method and bounded route template (never an id). */
export interface RequestTarget {
  method: string;
  /** e.g. `/org/members/{account_id}`. */
  route: string;
  /** The full URL requested, without its query (for messages; shown through `redactUrl`). */
  url?: string;
}

/**
 * The credential a refused request was sent with, as messages may name it: where it is configured and read from, and
 * its fingerprint (the first 8 hex digits of its SHA-256), never the key itself.
 */
export interface CredentialRef {
  /** The platform's base URL (platform.base_url). */
  baseUrl: string;
  /** keyFingerprint() of the key. */
  fingerprint: string;
  /** The setting the key came from: `platform.api_key` or `platform.api_keys[1]`; absent for a client built without a config. */
  setting?: string;
  /** Where the loader read it: `$ORGSYNC_API_KEY`, `file /run/secrets/orgsync-key`, or `the config file`. */
  from?: string;
}

/** Constructor fields of a PlatformError. */
export interface PlatformErrorInit extends RequestTarget {
  kind: PlatformErrorKind;
  message: string;
  /** HTTP status; 0 when no response arrived (network, timeout). */
  status?: number;
  /** The platform's error code (shape 2 `error.code`, or shape 1's numeric code as a string), e.g. `third_id_conflict`. */
  code?: string;
  /** Advised back-off from Retry-After, in milliseconds. */
  retryAfterMs?: number;
  /** The platform's request id (shape 2 `meta.request_id`, shape 1 `traceId`). */
  requestId?: string;
  cause?: unknown;
}

/** Base of every error the platform client throws. */
export class PlatformError extends Error {
  readonly kind: PlatformErrorKind;
  readonly status: number;
  readonly code: string;
  readonly retryAfterMs: number | undefined;
  readonly method: string;
  readonly route: string;
  readonly requestId: string | undefined;
  readonly url: string | undefined;
  /** For a refused credential (401, 403 scope_denied): which key it was; set by the client that sent it. */
  credential: CredentialRef | undefined;

  constructor(init: PlatformErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'PlatformError';
    this.kind = init.kind;
    this.status = init.status ?? 0;
    this.code = init.code ?? '';
    this.retryAfterMs = init.retryAfterMs;
    this.method = init.method;
    this.route = init.route;
    this.requestId = init.requestId;
    this.url = init.url;
  }
}

/** 400: a missing or malformed parameter (`invalid_argument`). */
export class BadRequestError extends PlatformError {}
/** 401: the credential is invalid (`invalid_api_key`, `invalid_session_token`). */
export class UnauthorizedError extends PlatformError {}
/** 403 `scope_denied`: the credential lacks the scope (e.g. tenant.org.read). */
export class ScopeDeniedError extends PlatformError {}
/** 403 other than scope_denied, e.g. `member_is_admin`. */
export class ForbiddenError extends PlatformError {}
/** 404: missing, in another tenant, or a tombstone. */
export class NotFoundError extends PlatformError {}
/** 409 with its reason in `code`: third_id_conflict, member_exists, department_cycle, department_is_root, department_has_children, department_has_members. */
export class ConflictError extends PlatformError {}
/** 429: `retryAfterMs` holds the advised back-off. */
export class RateLimitedError extends PlatformError {}
/** 5xx. */
export class ServerError extends PlatformError {}
/** No response: connection refused or reset, socket closed. */
export class NetworkError extends PlatformError {}
/** The request did not finish within the configured timeout. */
export class TimeoutError extends PlatformError {}
/** A 2xx body that is not JSON or does not match the spec; the message names the field. */
export class InvalidResponseError extends PlatformError {}

const CLASSES: Record<PlatformErrorKind, new (init: PlatformErrorInit) => PlatformError> = {
  bad_request: BadRequestError,
  unauthorized: UnauthorizedError,
  scope_denied: ScopeDeniedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  rate_limited: RateLimitedError,
  server: ServerError,
  network: NetworkError,
  timeout: TimeoutError,
  invalid_response: InvalidResponseError,
};

/** Every kind, in the order of the README's table. */
export const PLATFORM_ERROR_KINDS = Object.keys(CLASSES) as PlatformErrorKind[];

/** Builds the subclass that matches `init.kind`. */
export function platformError(init: PlatformErrorInit): PlatformError {
  return new CLASSES[init.kind](init);
}

/** True when `err` is a PlatformError (optionally of one kind). */
export function isPlatformError(err: unknown, kind?: PlatformErrorKind): err is PlatformError {
  return err instanceof PlatformError && (kind === undefined || err.kind === kind);
}

const SHAPE1_KIND: Record<number, PlatformErrorKind> = { 4010: 'unauthorized', 4030: 'forbidden', 4040: 'not_found' };

/** The kind of an HTTP error status (before looking at the body's code). */
function kindOfStatus(status: number, code: string): PlatformErrorKind {
  if (status === 401) return 'unauthorized';
  if (status === 403) return code === 'scope_denied' ? 'scope_denied' : 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** Parses a Retry-After header (delay-seconds or an HTTP date) into milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * Maps an error answer to a typed error. `body` is the parsed JSON (or undefined when it was not JSON).
 * Shape 2 gives `error.code` and `meta.request_id`; shape 1 gives a numeric `code` (4010/4030/4040) and `traceId`.
 */
export function errorFromResponse(
  target: RequestTarget,
  status: number,
  body: unknown,
  retryAfterMs: number | undefined,
): PlatformError {
  let code = '';
  let message = '';
  let requestId: string | undefined;
  let kind: PlatformErrorKind | undefined;
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const err = b.error;
    if (err && typeof err === 'object') {
      const e = err as Record<string, unknown>;
      if (typeof e.code === 'string') code = e.code;
      if (typeof e.message === 'string') message = e.message;
      const meta = b.meta as Record<string, unknown> | undefined;
      if (meta && typeof meta.request_id === 'string') requestId = meta.request_id;
    } else if (b.success === false || typeof b.code === 'number') {
      if (typeof b.code === 'number') {
        code = String(b.code);
        kind = SHAPE1_KIND[b.code];
      }
      if (typeof b.message === 'string') message = b.message;
      if (typeof b.traceId === 'string') requestId = b.traceId;
    }
  }
  // The HTTP status decides first; shape 1's numeric code refines only a 2xx envelope that reports failure.
  const finalKind = status >= 400 || kind === undefined ? kindOfStatus(status >= 400 ? status : 500, code) : kind;
  const text = `${target.method} ${target.route}: ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
  return platformError({ kind: finalKind, message: text, status, code, retryAfterMs, requestId, ...target });
}

/** Where a rejected key's row is documented; the catalogue code CREDENTIAL_REJECTED (src/shared/errors.ts). */
export const CREDENTIAL_REJECTED_DOC = 'docs/errors.md#credential_rejected';

/** `the platform at URL refused the API key from platform.api_key (read from $VAR; key fingerprint sha256:1a2b3c4d)`. */
function refusedKey(ref: CredentialRef | undefined): string {
  if (!ref) return 'the platform refused the key';
  const from = ref.from ? `read from ${ref.from}; ` : '';
  const key = ref.setting ? `the API key from ${ref.setting} (${from}key fingerprint sha256:${ref.fingerprint})` : `the key with fingerprint sha256:${ref.fingerprint}`;
  return `the platform at ${redactUrl(ref.baseUrl)} refused ${key}`;
}

/**
 * The user-facing form of a platform failure (one line, exit code 1), for the CLI and the daemon. A refused credential
 * (401, 403 scope_denied) names the platform, the setting and source of the key, its fingerprint, what to check and
 * the catalogue code; a credential without the scope also says which scope is missing.
 */
export function describePlatformError(err: PlatformError): string {
  const code = `(CREDENTIAL_REJECTED, ${CREDENTIAL_REJECTED_DOC})`;
  if (err.kind === 'scope_denied') {
    const scope = err.method === 'GET' ? 'tenant.org.read' : 'tenant.org.write';
    return `the platform credential lacks the scope ${scope} (${err.message}): ${refusedKey(err.credential)}; give the key the scope ${scope} in the tenant's admin console, or configure a key that has it ${code}`;
  }
  if (err.kind === 'unauthorized') {
    return `the platform rejected the credential (${err.message}): ${refusedKey(err.credential)}; check that the key is current (not revoked or expired) and belongs to this tenant ${code}`;
  }
  const url = err.url === undefined ? undefined : redactUrl(err.url);
  // A 404 on reading a collection (no id in the route) is no missing record: the URL does not reach the tenant API.
  if (url !== undefined && err.kind === 'not_found' && err.method === 'GET' && !err.route.includes('{')) {
    return `platform request failed: ${err.method} ${url}: ${err.status}: check platform.base_url (it should point at the tenant API root)`;
  }
  if (url !== undefined && err.kind === 'network' && isNotTls(err)) {
    return `platform request failed: ${err.method} ${url}: the server does not speak TLS: is platform.base_url https:// where it should be http://?`;
  }
  return `platform request failed: ${err.message}`;
}

/** A platform failure as the OrgsyncError a command ends with: CREDENTIAL_REJECTED for a refused key, else PLATFORM_ERROR. */
export function platformFailure(err: PlatformError, prefix = ''): OrgsyncError {
  const code = err.kind === 'unauthorized' || err.kind === 'scope_denied' ? 'CREDENTIAL_REJECTED' : 'PLATFORM_ERROR';
  return new OrgsyncError(code, `${prefix}${describePlatformError(err)}`, { cause: err });
}
