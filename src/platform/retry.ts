/**
 * The retry policy of the platform client.
 *
 * Retried: 429 (after its Retry-After, during which the whole credential bucket is paused), 500, 502, 503, 504,
 * connection resets / refused connections, and timeouts. Not retried: every other 4xx and invalid responses.
 * Delays are exponential with full jitter (a random delay between 0 and base * 2^(attempt-1), capped), so many
 * clients that failed together do not retry together. Bounded by attempts and by total time; the failures of an
 * outage (refused or reset connections, 502/503/504) by total time only.
 *
 * Every method is retried, POST included. Retrying a create is safe: if the first attempt did reach the platform,
 * the repeated create of the same third_*_id (or the same member's phone/e-mail) answers 409 (`third_id_conflict`,
 * `member_exists`) and the caller (the applier) adopts the existing record instead of creating a second one.
 * PATCH and DELETE are idempotent by nature (a repeated DELETE answers 404, which the applier treats as done).
 */
import { PLATFORM_DEFAULTS } from '../config/platform.js';
import type { PlatformError } from './errors.js';

/** Numbers of the retry policy. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Total time budget (ms) from the first attempt; no retry starts that would wait beyond it. */
  maxRetryTimeMs: number;
  /** Base of the exponential backoff (ms). */
  baseDelayMs: number;
  /** Cap of one backoff delay (ms). */
  maxDelayMs: number;
}

/** Defaults: platform.max_attempts and platform.max_retry_time_ms as the config schema defaults them (6, 2 minutes), 200 ms base, 20 s cap. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: PLATFORM_DEFAULTS.max_attempts, maxRetryTimeMs: PLATFORM_DEFAULTS.max_retry_time_ms, baseDelayMs: 200, maxDelayMs: 20_000 };

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
/** Statuses of a platform (or its gateway) that is down or restarting, rather than failing this request. */
const OUTAGE_STATUSES = new Set([502, 503, 504]);

/**
 * True for the failures of an outage: no connection (refused, reset, socket closed) or a gateway saying the platform
 * is down (502, 503, 504). These are retried for as long as the time budget lasts, whatever `maxAttempts` says, so
 * an outage of a few seconds in mid-apply costs time, not writes.
 */
export function isOutage(err: PlatformError): boolean {
  return err.kind === 'network' || OUTAGE_STATUSES.has(err.status);
}

/** Why a failure is retried (a bounded metric label), or undefined when it is not retryable. */
export function retryReason(err: PlatformError): 'rate_limited' | 'server' | 'network' | 'timeout' | undefined {
  if (err.kind === 'network') return 'network';
  if (err.kind === 'timeout') return 'timeout';
  if (RETRY_STATUSES.has(err.status)) return err.status === 429 ? 'rate_limited' : 'server';
  return undefined;
}

/** Full-jitter backoff before attempt `attempt + 1` (attempt counts from 1): uniform in [0, min(cap, base * 2^(attempt-1))). */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait before the next attempt, or undefined to give up: after `maxAttempts` (outages excepted, see isOutage) or
 * when the wait would end beyond the time budget. A 429 waits its Retry-After (the bucket is paused for
 * that long anyway); without Retry-After, or for other failures, the jittered backoff applies.
 */
export function nextDelay(
  policy: RetryPolicy,
  err: PlatformError,
  attempt: number,
  elapsedMs: number,
  random: () => number,
): number | undefined {
  if (retryReason(err) === undefined) return undefined;
  if (attempt >= policy.maxAttempts && !isOutage(err)) return undefined;
  const delay = err.retryAfterMs !== undefined && err.status === 429 ? err.retryAfterMs : backoffDelay(policy, attempt, random);
  if (elapsedMs + delay > policy.maxRetryTimeMs) return undefined;
  return delay;
}
