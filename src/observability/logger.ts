import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { LogConfig } from '../config/operations.js';
import { REDACTED, Redactor, SECRET_FIELD_NAMES } from '../shared/redact.js';

// The redactor is shared by every stage (src/shared/redact.ts); re-exported here for the logger's callers.
export { REDACTED, Redactor, SECRET_FIELD_NAMES } from '../shared/redact.js';

/** Where log lines go and how they look. */
export interface LoggerOptions {
  /** Lowest level written. */
  level: LogConfig['level'];
  /** The stream that receives the lines (stdout normally; stderr when stdout carries a document such as a JSON plan). */
  destination: NodeJS.WritableStream;
  /** Readable lines (pino-pretty) instead of JSON. */
  pretty: boolean;
  /** Secret values to redact wherever they appear, beyond the registered ones (the config's meta.secrets are registered when it loads). */
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
 * both by field path (pino redact) and on the finished line (the shared redactor: secret values, URL userinfo
 * and query values, credentials).
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
