/**
 * GET one JSON page of an HTTP source: retries (429, 5xx, network) with backoff, redirects followed by hand so the
 * origin rule holds for them too, the source's auth on its own origin only, and a fresh token after one 401.
 *
 * The origin rule: a next link or a redirect may lead only to the origin of the entity's configured `url` or to one
 * listed in `allowed_origins`; anything else fails the read with an error naming the origin. Credentials
 * (Authorization, Cookie and headers named like a key, token or secret) are never sent to another origin, listed
 * or not.
 */
import { readFile } from 'node:fs/promises';
import type { Dispatcher } from 'undici';
import { redactUrl } from '../../shared/redact.js';
import { isNotTls } from '../../shared/tls.js';
import { sourceUnreadable, throwIfAborted, type SourceReadContext } from '../context.js';
import type { AuthProvider } from './auth.js';
import { authFailure, httpTlsFailure, type HttpFailureSource } from './failures.js';

/** What one HTTP source brings to its requests. */
export interface HttpSource extends HttpFailureSource {
  name: string;
  headers: Record<string, string>;
  timeout_ms: number;
  max_attempts: number;
  /** Origins (scheme://host:port) besides the entity's own that links and redirects may lead to. */
  allowed_origins: string[];
}

const RETRYABLE = new Set([429, 500, 502, 503, 504]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|key|token|secret|auth|password/i;

/** What a request waited for when undici gave up, by its timeout code. */
const WAITED_FOR: Record<string, string> = { UND_ERR_HEADERS_TIMEOUT: 'no answer', UND_ERR_BODY_TIMEOUT: 'no end of the body' };

/** The end of a message for a request that got no answer: a timeout, TLS and plain HTTP under https:// name the setting. */
function transportFailure(err: unknown, entity: string, timeoutMs: number, url: URL, caPath: string | undefined): string {
  const tls = httpTlsFailure(err, url, caPath);
  if (tls !== undefined) return tls;
  const code = (err as { code?: string }).code;
  const waited = code === undefined ? undefined : WAITED_FOR[code];
  if (waited !== undefined) return `: ${waited} within ${timeoutMs} ms (${code}): raise this source's timeout_ms if the HRIS is this slow`;
  if (isNotTls(err)) return `: the server does not speak TLS: is ${entity}.url https:// where it should be http://?`;
  return ` failed: ${code ?? (err as Error).message}`;
}

/** The headers of this source that may go to another origin. */
export function headersForOtherOrigin(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADER.test(k)));
}

/** Reads JSON pages of one entity of an HTTP source; `home` is the origin of that entity's configured url. */
export class HttpPageReader {
  readonly home: string;

  /** The resolved path of the source's ca_file, when set. */
  private readonly caPath: string | undefined;
  /** An undici Agent trusting ca_file's CA (made at the first request), when ca_file is set. */
  private dispatcher: Promise<Dispatcher> | undefined;

  constructor(
    private readonly source: HttpSource,
    private readonly entity: string,
    url: string,
    private readonly auth: AuthProvider | undefined,
    private readonly ctx: SourceReadContext,
  ) {
    this.home = new URL(url).origin;
    this.caPath = source.ca_file === undefined ? undefined : ctx.resolvePath(source.ca_file);
  }

  /** The dispatcher of this source's requests: one that trusts ca_file's CA (instead of the system's), or undici's default. */
  private agent(): Promise<Dispatcher> | undefined {
    const caPath = this.caPath;
    if (caPath === undefined) return undefined;
    this.dispatcher ??= (async () => {
      let ca: Buffer;
      try {
        ca = await readFile(caPath);
      } catch (err) {
        throw sourceUnreadable(this.source.name, `cannot read ca_file ${caPath}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
      }
      const { Agent } = await import('undici');
      return new Agent({ connect: { ca } });
    })();
    return this.dispatcher;
  }

  /** Throws unless `target` may be read: the entity's own origin or an allowed one. */
  checkOrigin(target: URL, how: string): void {
    if (target.origin === this.home || this.source.allowed_origins.includes(target.origin)) return;
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw sourceUnreadable(this.source.name, `${this.entity}: ${how} leads to a ${target.protocol} URL; only http and https are read`);
    throw sourceUnreadable(
      this.source.name,
      `${this.entity}: ${how} leads to origin ${target.origin}, not the source's ${this.home}; refused (list ${target.origin} in allowed_origins to follow it; credentials are never sent there)`,
    );
  }

  private async headersFor(url: URL): Promise<Record<string, string>> {
    if (url.origin !== this.home) return { accept: 'application/json', ...headersForOtherOrigin(this.source.headers) };
    const h: Record<string, string> = { accept: 'application/json', ...this.source.headers };
    if (this.auth) h.authorization = await this.auth.authorization();
    return h;
  }

  /**
   * GETs (or POSTs `body` to) `url` and returns the response's text (2xx, or a status `answer` accepts: a delta read
   * handles 400 and 410 itself) after redirects, with the status and the server's Date header.
   */
  async getText(
    first: URL,
    request_: { method?: 'GET' | 'POST'; body?: unknown; answer?: (status: number) => boolean } = {},
  ): Promise<{ text: string; url: URL; status: number; date: string | undefined; header: (name: string) => string | undefined }> {
    let method = request_.method ?? 'GET';
    const payload = request_.body === undefined ? undefined : JSON.stringify(request_.body);
    const { source, entity, ctx } = this;
    let url = first;
    let redirects = 0;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const where = redactUrl(url);
      let status: number;
      let text: string;
      let retryAfter: string | string[] | undefined;
      let location: string | string[] | undefined;
      let date: string | string[] | undefined;
      let answered: Record<string, string | string[] | undefined> = {};
      try {
        const headers = await this.headersFor(url);
        if (method === 'POST') headers['content-type'] = 'application/json';
        // Loaded at the first request: a run without an HTTP source never evaluates the whole of undici (issue 31).
        const { request } = await import('undici');
        const dispatcher = await this.agent();
        const res = await request(url, {
          ...(dispatcher ? { dispatcher } : {}),
          method,
          ...(method === 'POST' ? { body: payload ?? '{}' } : {}),
          headers,
          headersTimeout: source.timeout_ms,
          bodyTimeout: source.timeout_ms,
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
        status = res.statusCode;
        retryAfter = res.headers['retry-after'];
        location = res.headers.location;
        date = res.headers.date;
        answered = res.headers;
        text = await res.body.text();
      } catch (err) {
        throwIfAborted(ctx.signal);
        if ((err as { code?: string }).code === 'SOURCE_UNREADABLE') throw err;
        if (attempt < source.max_attempts) {
          await ctx.clock.sleep(backoff(attempt), ctx.signal);
          continue;
        }
        throw sourceUnreadable(source.name, `${entity}: ${method} ${where}${transportFailure(err, entity, source.timeout_ms, url, this.caPath)}`, err);
      }
      if ((status >= 200 && status < 300) || request_.answer?.(status) === true) return { text, url, status, date: Array.isArray(date) ? date[0] : date, header: headerOf(answered) };
      if (REDIRECTS.has(status)) {
        const loc = Array.isArray(location) ? location[0] : location;
        if (!loc) throw sourceUnreadable(source.name, `${entity}: ${method} ${where} answered HTTP ${status} without a Location`);
        if (++redirects > MAX_REDIRECTS) throw sourceUnreadable(source.name, `${entity}: ${method} ${redactUrl(first)}: more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(loc, url);
        this.checkOrigin(next, `a redirect (HTTP ${status})`);
        // 307 and 308 repeat the request as it was; the others become a GET (RFC 9110 15.4).
        if (status !== 307 && status !== 308) method = 'GET';
        url = next;
        attempt = 0;
        continue;
      }
      if (status === 401 && this.auth?.refreshable && !refreshed && url.origin === this.home) {
        // The token may have expired early (revoked, clock skew): one fresh token, then the answer stands.
        refreshed = true;
        this.auth.invalidate();
        ctx.logger.info({ source: source.name, entity }, 'HRIS answered 401: fetching a fresh token');
        attempt = 0;
        continue;
      }
      if (RETRYABLE.has(status) && attempt < source.max_attempts) {
        const ra = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
        ctx.logger.warn({ source: source.name, entity, status, attempt }, 'HRIS request will be retried');
        await ctx.clock.sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra, 300) * 1000 : backoff(attempt), ctx.signal);
        continue;
      }
      const refused = (status === 401 || status === 403) && url.origin === this.home ? authFailure(status, text, source, ctx) : '';
      throw sourceUnreadable(source.name, `${entity}: ${method} ${where} answered HTTP ${status}${status === 401 && refreshed ? ' (also with a fresh token)' : ''}${refused}`);
    }
  }
}

/** One response header by name (any case; the first value of a repeated one). */
function headerOf(headers: Record<string, string | string[] | undefined>): (name: string) => string | undefined {
  return (name) => {
    const v = headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
}

function backoff(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** (attempt - 1));
}
