import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { LogConfig } from '../config/operations.js';

/** What replaces a redacted value. */
export const REDACTED = '[REDACTED]';

/** Field names whose values are never logged, at any depth (compared case-insensitively). */
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

// Shorter "secrets" (a test value such as "x") would shred every line; real keys and passwords are longer.
const MIN_SECRET_LENGTH = 4;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret can take inside a JSON log line: as is, and JSON-escaped. */
function secretForms(secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1);
  return escaped === secret ? [secret] : [secret, escaped];
}

/**
 * Scrubs secrets out of serialized text: known secret values (from the environment and *_file mounts), bearer
 * credentials, platform keys and tokens (ek_..., st_...), and JSON fields named like secrets at any depth.
 * It works on the finished line, so a secret cannot slip through in a message, an error text or a stack.
 */
export class Redactor {
  private readonly valuePattern: RegExp | undefined;
  private static readonly fieldPattern = new RegExp(
    `("(?:${SECRET_FIELD_NAMES.map(escapeRegExp).join('|')})"\\s*:\\s*)("(?:[^"\\\\]|\\\\.)*"|-?\\d[\\d.eE+-]*)`,
    'gi',
  );
  private static readonly credentialPattern = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}|\b(?:ek|st)_[A-Za-z0-9][A-Za-z0-9_-]{5,}/g;

  constructor(secrets: readonly string[] = []) {
    const forms = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap(secretForms))];
    // Longest first, so a secret that contains another is replaced whole.
    forms.sort((a, b) => b.length - a.length);
    this.valuePattern = forms.length > 0 ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  /** The text with every secret replaced by [REDACTED]. */
  redact(text: string): string {
    let out = this.valuePattern ? text.replace(this.valuePattern, REDACTED) : text;
    out = out.replace(Redactor.credentialPattern, (match, scheme: string | undefined) => (scheme ? `${scheme} ${REDACTED}` : REDACTED));
    out = out.replace(Redactor.fieldPattern, (_m, key: string) => `${key}"${REDACTED}"`);
    return out;
  }
}

/** Where log lines go and how they look. */
export interface LoggerOptions {
  /** Lowest level written. */
  level: LogConfig['level'];
  /** The stream that receives the lines (stdout normally; stderr when stdout carries a document such as a JSON plan). */
  destination: NodeJS.WritableStream;
  /** Readable lines (pino-pretty) instead of JSON. */
  pretty: boolean;
  /** Secret values to redact wherever they appear (the config's meta.secrets). */
  secrets?: readonly string[];
  /** Extra pino redact paths (config log.redact). */
  redactPaths?: readonly string[];
  /** Fields on every line. */
  base?: Record<string, unknown>;
}

/** The pino logger orgsync uses; it satisfies src/shared/logger.ts's Logger. */
export type OrgsyncLogger = PinoLogger;

/** Whether log lines should be pretty, from the config's log.format and whether the destination is a terminal. */
export function wantsPretty(format: LogConfig['format'], isTTY: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && isTTY);
}

/**
 * Builds the pino logger: JSON lines (or pretty lines on a terminal) to `destination`, with secrets redacted
 * both by field path (pino redact) and by value on the finished line (Redactor).
 */
export function createLogger(options: LoggerOptions): OrgsyncLogger {
  const redactor = new Redactor(options.secrets ?? []);
  const target: NodeJS.WritableStream = options.pretty
    ? (pretty({ destination: options.destination, colorize: false, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) as unknown as NodeJS.WritableStream)
    : options.destination;
  const destination: DestinationStream = {
    write(line: string) {
      target.write(redactor.redact(line));
    },
  };
  const paths = [
    ...SECRET_FIELD_NAMES.flatMap((name) => [name, `*.${name}`]).filter((p) => /^[\w*.]+$/.test(p)),
    'headers.authorization',
    '*.headers.authorization',
    'req.headers.authorization',
    'req.headers.cookie',
    ...(options.redactPaths ?? []),
  ];
  return pino(
    {
      level: options.level,
      base: { ...(options.base ?? {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names read better than numbers in JSON; pino-pretty wants the numbers.
      ...(options.pretty ? {} : { formatters: { level: (label: string) => ({ level: label }) } }),
      redact: { paths, censor: REDACTED },
    },
    destination,
  );
}
