import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';
import type { LogConfig } from '../config/operations.js';
import { maskContactsInText } from '../shared/personal.js';
import { REDACTED, Redactor, SECRET_FIELD_NAMES } from '../shared/redact.js';
import type { TerminalLine } from './terminal-line.js';

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
  secrets: readonly string[];
  /** Extra pino redact paths (config log.redact; the schema defaults it). */
  redactPaths: readonly string[];
  /** Fields on every line. */
  base?: Record<string, unknown>;
  /** A terminal's status line (the sync's progress): readable lines are printed above it, never glued onto it. */
  terminal?: TerminalLine;
  /**
   * log.personal_data (issue 29): keep `detail` (a change line with the person's name) in JSON lines. Readable lines
   * for a terminal keep it anyway: the operator in front of it ran the command.
   */
  personalData?: boolean;
}

const requireLazily = createRequire(import.meta.url);

/**
 * pino-pretty, loaded when a logger first wants readable lines: JSON logs (every deployment, every CI run) never
 * evaluate it and its dozen dependencies (about 1 MB of heap in each run, issue 31).
 */
function prettyStream(options: PinoPretty.PrettyOptions): PinoPretty.PrettyStream {
  return (requireLazily('pino-pretty') as typeof PinoPretty)(options);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * One readable line per log entry for a terminal: `15:04:05 INFO  mirror refreshed entity=members pages=1`, and an
 * applied change as its short line (`15:04:05 DEBUG CREATE member E1002 "Lars Okafor" in /Acme/Sales`).
 */
export function terminalLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof o.time === 'string' ? o.time.slice(11, 19) : '';
  const level = (LEVEL_NAMES[o.level as number] ?? String(o.level)).padEnd(5);
  if ((o.msg === 'change applied' || o.msg === 'would apply') && typeof o.line === 'string') return `${time} ${level} ${typeof o.detail === 'string' ? o.detail : o.line}${o.dry_run === true ? ' (dry run)' : ''}\n`;
  const skip = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'sync_id', 'run_id', 'line', 'detail']);
  const rest = Object.entries(o)
    .filter(([k]) => !skip.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? (/[\s"]/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`);
  return `${time} ${level} ${String(o.msg ?? '')}${rest.length ? ` ${rest.join(' ')}` : ''}\n`;
}

/**
 * A JSON line's fields without `detail`, the person-level change line (issue 29): set to undefined in place, which
 * pino leaves out, rather than a copy per line (at thousands of changes a second copies were the peak's garbage).
 */
function withoutPersonDetail(fields: Record<string, unknown>): Record<string, unknown> {
  if (fields.detail !== undefined) fields.detail = undefined;
  return fields;
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
  const redactor = new Redactor(options.secrets);
  const terminal = options.terminal;
  const target: NodeJS.WritableStream = options.pretty
    ? (prettyStream({ destination: options.destination, colorize: false, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) as unknown as NodeJS.WritableStream)
    : options.destination;
  // JSON lines without log.personal_data: an e-mail or phone that reached a message or field anyway is masked
  // (issue 44); messages are static and name records by id, so this is the last line of defence, not the rule.
  const shown = options.pretty || options.personalData ? (line: string) => redactor.redact(line) : (line: string) => maskContactsInText(redactor.redact(line));
  const destination: DestinationStream = {
    write(line: string) {
      // On a terminal with a status line: one short line per entry, printed above the status line.
      if (terminal && options.pretty) terminal.print(redactor.redact(terminalLine(line)));
      else target.write(shown(line));
    },
  };
  const paths = [
    ...SECRET_FIELD_NAMES.flatMap((name) => [name, `*.${name}`]).filter((p) => /^[\w*.]+$/.test(p)),
    'headers.authorization',
    '*.headers.authorization',
    'req.headers.authorization',
    'req.headers.cookie',
    ...options.redactPaths,
  ];
  return pino(
    {
      level: options.level,
      base: { ...(options.base ?? {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names read better than numbers in JSON; pino-pretty wants the numbers.
      ...(options.pretty ? {} : { formatters: { level: (label: string) => ({ level: label }), ...(options.personalData ? {} : { log: withoutPersonDetail }) } }),
      // On a terminal an applied change is a debug line (one each at log.level debug); JSON logs keep one at info.
      ...(options.pretty
        ? {
            hooks: {
              logMethod(this: PinoLogger, args: Parameters<PinoLogger['info']>, method: PinoLogger['info'], level: number) {
                // pino's own arguments of one log call (an object and a message): a bounded list.
                // eslint-disable-next-line orgsync/no-spread-arguments
                if (level === 30 && (args[1] === 'change applied' || args[1] === 'would apply')) return this.debug(...(args as [object, string]));
                // eslint-disable-next-line orgsync/no-spread-arguments
                return method.apply(this, args);
              },
            },
          }
        : {}),
      redact: { paths, censor: REDACTED },
    },
    destination,
  );
}
