import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { OrgsyncError } from '../shared/errors.js';
import { registerSecrets } from '../shared/redact.js';
import { expandPresets } from './presets/index.js';
import { configSchema, type Config } from './schema.js';
import { schemaKeysAt, yamlLocator } from './locate.js';
import { formatPath, formatZodIssues } from './zod-errors.js';

/**
 * Keys that hold secrets. Each may instead be given as `<key>_file` (a Kubernetes Secret mount); values are
 * collected into `meta.secrets` and registered with the shared redactor (src/shared/redact.ts), which replaces
 * them wherever they would appear.
 */
export const SECRET_KEYS = new Set(['api_key', 'password', 'bind_password', 'token', 'client_secret', 'secret']);

/**
 * Whether `key` at `path` holds a secret: a SECRET_KEYS name anywhere, and `key` in an entry of `platform.api_keys`
 * (elsewhere `key` / `key_file` are no secrets: a Google service account's `key_file` is a path the source reads).
 */
export function isSecretKey(path: readonly (string | number)[], key: string): boolean {
  return SECRET_KEYS.has(key) || (key === 'key' && path.length === 3 && path[0] === 'platform' && path[1] === 'api_keys');
}

/**
 * The limits a config document must stay within (the `yaml` package's own guard against alias bombs, and a size
 * no real config comes near): past them the config is refused as invalid (exit 2), never parsed further.
 */
export const CONFIG_LIMITS = {
  /** Largest config file, in bytes (1 MiB). */
  maxBytes: 1024 * 1024,
  /** The `yaml` package's maxAliasCount: how many alias resolutions a document may make (a billion-laughs bomb makes millions). */
  maxAliasCount: 100,
} as const;

/** Resolves a path from the config against the config file's folder. */
export function resolveConfigPath(config: Pick<Config, 'meta'>, path: string): string {
  return isAbsolute(path) ? path : resolve(config.meta.dir, path);
}

interface LoadContext {
  env: Record<string, string | undefined>;
  /** false: leave platform.api_key / api_key_file / api_keys out (commands that never call the platform, e.g. sources check). */
  platformSecrets: boolean;
  /** Unreadable or empty `*_file` secrets (the secret's path, the message line), reported together after the walk. */
  secretProblems: { secret: (string | number)[]; line: string }[];
  /** `file:line:col` of a key path (./locate.ts), the start of every config error's line. */
  locate: (path: readonly PropertyKey[]) => string;
  dir: string;
  file: string;
  secrets: Set<string>;
  /** Where each platform key setting was read: `platform.api_keys[1]` -> `$HR_KEY` (PlatformConfig.key_origins). */
  keyOrigins: Record<string, string>;
  /** Where each secret of a source was read: `sources[0].bind_password` -> `$LDAP_PASSWORD` (meta.secret_origins). */
  secretOrigins: Record<string, string>;
}

const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The platform key setting `key` at `path` is (`platform.api_key`, `platform.api_keys[1]`), or undefined for any other key. */
function keySetting(path: readonly (string | number)[], key: string): string | undefined {
  if (key === 'api_key' && path.length === 1 && path[0] === 'platform') return 'platform.api_key';
  if (key === 'key' && path.length === 3 && path[0] === 'platform' && path[1] === 'api_keys') return `platform.api_keys[${path[2]}]`;
  return undefined;
}

/** Where a key written as `value` in the file is read from: its environment variables (`$ORGSYNC_API_KEY`), or the file itself. */
function writtenOrigin(value: string): string {
  const names = [...value.matchAll(ENV_REF)].filter((m) => m[1] !== undefined).map((m) => `$${m[1]}`);
  return names.length > 0 ? names.join(', ') : 'the config file';
}

const URL_VALUE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;
const PATH_VALUE = /^\.{0,2}\//;

/**
 * Which values from the environment are secrets. Inside a secret-bearing value (a secret key, `headers`): all of
 * it. Elsewhere: any value of 8 characters or more, except what only says where things are, which messages must
 * still name: a URL (only its userinfo and query values are secret; the redactor hides those in every URL anyway)
 * and a file path.
 */
function registerEnvValue(v: string, isSecret: boolean, ctx: LoadContext): void {
  if (isSecret) {
    ctx.secrets.add(v);
  } else if (URL_VALUE.test(v)) {
    try {
      const u = new URL(v);
      for (const part of [decodeURIComponent(u.username), decodeURIComponent(u.password), ...u.searchParams.values()]) if (part.length >= 4) ctx.secrets.add(part);
    } catch {
      if (v.length >= 8) ctx.secrets.add(v);
    }
  } else if (!PATH_VALUE.test(v) && v.length >= 8) {
    ctx.secrets.add(v);
  }
}

/**
 * Why a secret's value cannot be one (issue 44), or undefined: several lines or a control character would be sent
 * as part of a header or a bind and fail far from their cause (a two-line key file made `plan` retry for a minute
 * and exit without a word). The value itself is never shown.
 */
export function secretShapeProblem(secret: string): string | undefined {
  const lines = secret.split(/\r\n|\r|\n/).length;
  if (lines > 1) return `holds ${lines} lines; a secret is one line (write it without the extra lines, e.g. printf '%s' "$SECRET" > file)`;
  // eslint-disable-next-line no-control-regex
  const control = /[\u0000-\u001f\u007f]/.exec(secret);
  if (control) return `holds a control character (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}); a secret is one line of printable characters`;
  return undefined;
}

/** Replaces `${VAR}` and `${VAR:-default}`; `$${` is a literal `${`. A missing variable is an error naming the path. */
function interpolate(value: string, path: (string | number)[], ctx: LoadContext, isSecret: boolean): string {
  return value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    const v = ctx.env[name!];
    if (v === undefined || v === '') {
      if (fallback !== undefined) return fallback;
      throw new OrgsyncError('CONFIG_INVALID', `${ctx.locate(path)}: ${formatPath(path)}: environment variable ${name} is not set`);
    }
    registerEnvValue(v, isSecret, ctx);
    return v;
  });
}

/**
 * The user-info of a URL written in the config (`https://svc:pw@host`) is a credential wherever it came from: its
 * password (or a user name alone of 8 characters or more, a token's place) is registered, so every output replaces
 * it (issue 44: `config validate` printed it).
 */
function registerUserInfo(value: string, ctx: LoadContext): void {
  if (!URL_VALUE.test(value) || !value.includes('@')) return;
  try {
    const u = new URL(value);
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    if (password !== '') ctx.secrets.add(password);
    else if (user.length >= 8) ctx.secrets.add(user);
  } catch {
    // not a URL after all: nothing to register
  }
}

function walk(node: unknown, path: (string | number)[], ctx: LoadContext, inSecret: boolean): unknown {
  if (typeof node === 'string') {
    const value = interpolate(node, path, ctx, inSecret);
    registerUserInfo(value, ctx);
    return value;
  }
  if (Array.isArray(node)) return node.map((v, i) => walk(v, [...path, i], ctx, inSecret));
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const base = key.endsWith('_file') ? key.slice(0, -5) : undefined;
      if (!ctx.platformSecrets && path.length === 1 && path[0] === 'platform' && (SECRET_KEYS.has(base ?? key) || key === 'api_keys')) continue;
      if (base !== undefined && isSecretKey(path, base)) {
        if (typeof value !== 'string') throw new OrgsyncError('CONFIG_INVALID', `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: expected a file path`);
        if ((node as Record<string, unknown>)[base] !== undefined) {
          throw new OrgsyncError('CONFIG_INVALID', `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: give either ${base} or ${key}, not both`);
        }
        const filePath = interpolate(value, [...path, key], ctx, false);
        const abs = isAbsolute(filePath) ? filePath : resolve(ctx.dir, filePath);
        let secret: string;
        try {
          secret = readFileSync(abs, 'utf8').replace(/\r?\n$/, '');
        } catch (err) {
          // Collected, so that every unreadable secret file of every source is reported at once.
          ctx.secretProblems.push({ secret: [...path, base], line: `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: cannot read secret file ${abs}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
          continue;
        }
        if (secret === '') {
          ctx.secretProblems.push({ secret: [...path, base], line: `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: secret file ${abs} is empty` });
          continue;
        }
        const shape = secretShapeProblem(secret);
        if (shape) {
          ctx.secretProblems.push({ secret: [...path, base], line: `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: secret file ${abs} ${shape}` });
          continue;
        }
        ctx.secrets.add(secret);
        const setting = keySetting(path, base);
        if (setting) ctx.keyOrigins[setting] = `file ${abs}`;
        if (path[0] === 'sources') ctx.secretOrigins[formatPath([...path, base])] = `file ${abs} (${key})`;
        out[base] = secret;
        continue;
      }
      if (SECRET_KEYS.has(key) && path.includes('auth') && typeof value === 'string' && value.length > 1 && !/\$\{[A-Za-z_]/.test(value)) {
        // auth: secrets come from the environment or a file only, never written into the config itself (a one-character
        // placeholder password, BambooHR's "x" beside an API key user name, is not a secret).
        throw new OrgsyncError('CONFIG_INVALID', `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: give the secret from the environment ("\${VAR}") or a file (${key}_file), not in the config`);
      }
      const secretish = inSecret || isSecretKey(path, key) || key === 'headers';
      const v = walk(value, [...path, key], ctx, secretish);
      if (isSecretKey(path, key) && typeof v === 'string' && v !== '') {
        ctx.secrets.add(v);
        const shape = secretShapeProblem(v);
        if (shape) ctx.secretProblems.push({ secret: [...path, key], line: `${ctx.locate([...path, key])}: ${formatPath([...path, key])}: the value ${shape}` });
      }
      const setting = keySetting(path, key);
      if (setting && typeof value === 'string') ctx.keyOrigins[setting] = writtenOrigin(value);
      if (path[0] === 'sources' && isSecretKey(path, key) && typeof value === 'string') ctx.secretOrigins[formatPath([...path, key])] = writtenOrigin(value);
      out[key] = v;
    }
    return out;
  }
  return node;
}

/** How a config is loaded. */
export interface LoadOptions {
  /** Resolve platform.api_key / api_key_file (default true); false for commands that never call the platform. */
  platformSecrets?: boolean;
}

/** Parses, interpolates and validates a config text. `file` is used for messages and relative paths. */
export function parseConfig(text: string, file: string, env: Record<string, string | undefined>, options: LoadOptions = {}): Config {
  const abs = resolve(file);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > CONFIG_LIMITS.maxBytes) throw tooLarge(abs, bytes);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, lineCounter });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0];
    throw new OrgsyncError('CONFIG_INVALID', `${abs}${line ? `:${line.line}:${line.col}` : ''}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount }) as unknown;
  } catch (err) {
    // The yaml package refuses a document whose aliases expand past maxAliasCount (a "billion laughs" bomb) with a
    // ReferenceError; an alias to no anchor likewise. Both are the config's fault, not orgsync's.
    const message = err instanceof Error ? err.message : String(err);
    if (/excessive alias count/i.test(message)) {
      throw new OrgsyncError(
        'CONFIG_INVALID',
        `${abs}: invalid YAML: its aliases (*name) expand more than ${CONFIG_LIMITS.maxAliasCount} times, as an alias bomb does; write the values out instead of aliasing aliases`,
        { cause: err },
      );
    }
    throw new OrgsyncError('CONFIG_INVALID', `${abs}: invalid YAML: ${message.split('\n')[0]}`, { cause: err });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new OrgsyncError('CONFIG_INVALID', `${abs}: the config must be a YAML mapping`);
  }
  const ctx: LoadContext = { env, platformSecrets: options.platformSecrets ?? true, secretProblems: [], locate: yamlLocator(doc, lineCounter, abs), dir: dirname(abs), file: abs, secrets: new Set(), keyOrigins: {}, secretOrigins: {} };
  const interpolated = walk(raw, [], ctx, false) as Record<string, unknown>;
  // Presets are config fragments under the source's own keys: expanded before validation, so errors name real keys.
  if ('sources' in interpolated) interpolated.sources = expandPresets(interpolated.sources);
  // From here on every stage's output (logs, errors, /status, history, plan files, the terminal) replaces them.
  registerSecrets(ctx.secrets);
  // reportInput: zod 4 keeps the offending input on issues only when asked; formatZodIssues needs it to tell
  // a missing value ("required") from a wrong one. Messages never print the input itself (it may be a secret).
  const result = configSchema.safeParse(interpolated, { reportInput: true });
  // Every problem at once, one line each starting with the file's line:column: unreadable secret files first, then
  // the schema's issues (a secret left out may add a "required" issue for the same key, which says nothing new).
  const context = { locate: ctx.locate, allowedKeys: (path: readonly PropertyKey[]) => schemaKeysAt(configSchema, path, interpolated) };
  const unread = new Set(ctx.secretProblems.map((p) => formatPath(p.secret)));
  const issues = result.success ? [] : formatZodIssues({ issues: result.error.issues.filter((i) => !(unread.has(formatPath(i.path)) && i.code === 'invalid_type')) }, 10, context);
  if (ctx.secretProblems.length > 0) {
    const lines = [...ctx.secretProblems.map((p) => p.line), ...issues];
    throw new OrgsyncError('SECRET_UNREADABLE', lines.join('\n'), { details: { issues: lines } });
  }
  if (!result.success) throw new OrgsyncError('CONFIG_INVALID', issues.join('\n'), { details: { issues } });
  const config: Config = { ...result.data, platform: { ...result.data.platform, key_origins: ctx.keyOrigins }, meta: { file: abs, dir: ctx.dir, secrets: [...ctx.secrets], secret_origins: ctx.secretOrigins } };
  return deepFreeze(config);
}

function tooLarge(abs: string, bytes: number): OrgsyncError {
  return new OrgsyncError('CONFIG_INVALID', `${abs}: the config file is ${bytes} bytes, more than the ${CONFIG_LIMITS.maxBytes} a config may have; is it the right file?`);
}

/** Reads and validates the config file at `file`. */
export function loadConfig(file: string, env: Record<string, string | undefined>, options: LoadOptions = {}): Config {
  let bytes: Buffer;
  let size: number;
  try {
    size = statSync(file).size;
    // Checked before reading: a config path pointed at a huge file must not be read into memory.
    bytes = size <= CONFIG_LIMITS.maxBytes ? readFileSync(file) : Buffer.alloc(0);
  } catch (err) {
    throw new OrgsyncError('CONFIG_NOT_FOUND', `cannot read config file ${resolve(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (size > CONFIG_LIMITS.maxBytes) throw tooLarge(resolve(file), size);
  const utf16 = utf16Kind(bytes);
  if (utf16) {
    throw new OrgsyncError('CONFIG_INVALID', `${resolve(file)}: the config file is ${utf16}, but config files are read as UTF-8: save it as UTF-8 (e.g. iconv -f ${utf16 === 'UTF-16BE' ? 'utf-16be' : 'utf-16le'} -t utf-8)`);
  }
  return parseConfig(bytes.toString('utf8'), file, env, options);
}

/** 'UTF-16LE' / 'UTF-16BE' when the bytes are UTF-16 text (a byte order mark, or NUL bytes beside ASCII), else undefined. */
function utf16Kind(bytes: Buffer): 'UTF-16LE' | 'UTF-16BE' | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'UTF-16LE';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'UTF-16BE';
  if (bytes.length >= 2 && bytes[1] === 0 && bytes[0] !== 0) return 'UTF-16LE';
  if (bytes.length >= 2 && bytes[0] === 0 && bytes[1] !== 0) return 'UTF-16BE';
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
