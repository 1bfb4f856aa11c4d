/**
 * The one redactor every stage uses before text leaves the process: log lines, error messages, quarantine
 * locations, /status, the run history, /metrics, plan files and the terminal.
 *
 * - Secret values: every value that came from `${VAR}`, a `*_file` mount or a secret key (api_key, password,
 *   token, headers, ...) is registered once, when the config is loaded (`registerSecrets`), and replaced by
 *   `[redacted]` wherever it appears, as is, JSON-escaped or URL-encoded.
 * - URLs in text: userinfo and every query value are replaced (`https://[redacted]@host/x?access_token=[redacted]`);
 *   the scheme, host, path, query names and fragment stay, so a message still says where.
 * - Credentials by shape: `Bearer ...` / `Basic ...`, platform keys and tokens (`ek_...`, `st_...`), and JSON
 *   fields named like secrets (`"password": "..."`).
 *
 * `redact` applies all three and is for text people read (logs, errors, /status, /metrics, the run history).
 * `redactSecrets` replaces registered values only and is for documents that are read back as data (plan files,
 * stdout), where rewriting every URL's query would change the data itself.
 */

/** What replaces a secret. */
export const REDACTED = '[redacted]';

/** Field names whose values are never shown, at any depth (compared case-insensitively). */
export const SECRET_FIELD_NAMES = [
  'api_key',
  'apikey',
  'password',
  'bind_password',
  'passwd',
  'token',
  'access_token',
  'refresh_token',
  'client_secret',
  'secret',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
] as const;

/**
 * Values shorter than this are not replaced: a one- or three-letter "secret" (a test value, `US`, `on`) would
 * shred every line, and is no secret. Documented in docs/operations.md.
 */
export const MIN_SECRET_LENGTH = 4;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret can take in output: as is, JSON-escaped, URL-encoded (form and component). */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)]);
  return [...forms];
}

function buildPattern(secrets: Iterable<string>): RegExp | undefined {
  const forms = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap(secretForms))];
  // Longest first, so a secret that contains another is replaced whole.
  forms.sort((a, b) => b.length - a.length);
  return forms.length > 0 ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined;
}

/** The process-wide set of secret values (filled by the config loader; only grows). */
const registry = new Set<string>();
let registryPattern: RegExp | undefined;
let registryDirty = false;

/** Registers values to be replaced wherever they appear from now on. */
export function registerSecrets(values: Iterable<string>): void {
  for (const v of values) {
    if (typeof v === 'string' && v.length >= MIN_SECRET_LENGTH && !registry.has(v)) {
      registry.add(v);
      registryDirty = true;
    }
  }
}

function registered(): RegExp | undefined {
  if (registryDirty) {
    registryPattern = buildPattern(registry);
    registryDirty = false;
  }
  return registryPattern;
}

// A URL in running text ends before trailing punctuation (`... ?p=1: malformed`, `(see https://x/y?z=1).`).
const URL_IN_TEXT = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'<>\\`]*[^\s"'<>\\`.,;:!?)]/g;
const FIELD_PATTERN = new RegExp(`("(?:${SECRET_FIELD_NAMES.map(escapeRegExp).join('|')})"\\s*:\\s*)("(?:[^"\\\\]|\\\\.)*"|-?\\d[\\d.eE+-]*)`, 'gi');
const CREDENTIAL_PATTERN = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}|\b(?:ek|st)_[A-Za-z0-9][A-Za-z0-9_-]{5,}/g;

/**
 * Query parameters whose values are paging positions (`page`, `$skip`, `startIndex`, a cursor parameter): shown in
 * locations and messages, so records of different pages have different locations (issue 45). Registered by the HRIS
 * walk: the parameters its config names, and those whose values change from one page's URL to the next unless named
 * like a credential. Process-wide and bounded; registered secret values are replaced inside them all the same.
 */
const pagingParams = new Set<string>();
const MAX_PAGING_PARAMS = 200;

/** A query parameter named like a credential: its value is never shown, even when it changes from page to page. */
export const CREDENTIAL_PARAM = /token|key|secret|sig|password|passwd|auth|credential|session|code/i;

/** Shows the values of these query parameters (`$skip`, `page`); `learned`: from page URLs, so names like credentials are left out. */
export function registerPagingParams(names: Iterable<string>, learned = false): void {
  for (const n of names) {
    if (pagingParams.size >= MAX_PAGING_PARAMS) return;
    if (n !== '' && !(learned && CREDENTIAL_PARAM.test(n))) pagingParams.add(n);
  }
}

/**
 * Forgets every registered secret and paging parameter. For `npm run test:quick`, whose test files share one module
 * instance per worker: each file starts from what a process of its own would have. A run never calls it.
 */
export function forgetRegistered(): void {
  registry.clear();
  registryPattern = undefined;
  registryDirty = false;
  pagingParams.clear();
}

/** True when the values of query parameter `name` (as written in a URL, perhaps %-encoded) are paging positions. */
function isPagingParam(name: string): boolean {
  if (pagingParams.size === 0) return false;
  if (pagingParams.has(name)) return true;
  try {
    return pagingParams.has(decodeURIComponent(name.replace(/\+/g, ' ')));
  } catch {
    return false;
  }
}

/** A URL (text or URL object) with its userinfo and every query value but paging positions replaced; text that is no URL is returned as is. */
export function redactUrl(url: string | URL): string {
  const text = typeof url === 'string' ? url : url.toString();
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(text);
  if (!m) return text;
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? `${REDACTED}@${authority.slice(at + 1)}` : authority;
  const q = rest.indexOf('?');
  if (q < 0) return `${scheme}${host}${rest}`;
  const hash = rest.indexOf('#', q);
  const query = rest.slice(q + 1, hash < 0 ? undefined : hash);
  const shownQuery = query
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const eq = pair.indexOf('=');
      if (eq < 0) return REDACTED;
      const name = pair.slice(0, eq);
      return isPagingParam(name) ? `${name}=${redactSecrets(pair.slice(eq + 1))}` : `${name}=${REDACTED}`;
    })
    .join('&');
  return `${scheme}${host}${rest.slice(0, q)}?${shownQuery}${hash < 0 ? '' : rest.slice(hash)}`;
}

/** Text with registered secret values replaced (and any given in `extra`). Safe for documents read back as data. */
export function redactSecrets(text: string, extra?: RegExp): string {
  const pattern = registered();
  let out = pattern ? text.replace(pattern, REDACTED) : text;
  if (extra) out = out.replace(extra, REDACTED);
  return out;
}

/** Text with secret values, URL userinfo and query values, credentials and secret-named JSON fields replaced. */
export function redact(text: string, extra?: RegExp): string {
  let out = redactSecrets(text, extra);
  out = out.replace(URL_IN_TEXT, (u) => redactUrl(u));
  out = out.replace(CREDENTIAL_PATTERN, (_match, scheme: string | undefined) => (scheme ? `${scheme} ${REDACTED}` : REDACTED));
  out = out.replace(FIELD_PATTERN, (_m, key: string) => `${key}"${REDACTED}"`);
  return out;
}

const SECRET_FIELDS = new Set<string>(SECRET_FIELD_NAMES);

/**
 * A JSON-able value with every string in it passed through `redact` and every field named like a secret
 * replaced (for /status and the run history). Returns a copy; the input is not changed.
 */
export function redactValue<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      if (v instanceof Date) return v;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = SECRET_FIELDS.has(k.toLowerCase()) && x !== null && x !== undefined ? REDACTED : walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * A redactor with extra secrets of its own (an emulator's seed keys, a logger's configured values) on top of
 * the registered ones.
 */
export class Redactor {
  private readonly extra: RegExp | undefined;

  constructor(secrets: readonly string[] = []) {
    this.extra = buildPattern(secrets);
  }

  /** The text with every secret replaced by [redacted]. */
  redact(text: string): string {
    return redact(text, this.extra);
  }
}
