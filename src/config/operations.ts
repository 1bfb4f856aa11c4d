import { createRequire } from 'node:module';
import type * as NodeCron from 'node-cron';
import { z } from 'zod';
import { httpUrlSchema } from './transport.js';
import { durationSchema } from './platform.js';

const requireLazily = createRequire(import.meta.url);

/**
 * node-cron's validator, loaded when a `schedule:` is read: every command loads this schema, only the daemon needs
 * node-cron (issue 31: what a one-shot run loads, it carries to its peak).
 */
function validateCron(expression: string): ReturnType<typeof NodeCron.validateDetailed> {
  return (requireLazily('node-cron') as typeof NodeCron).validateDetailed(expression);
}

/** The default daemon schedule: every 30 minutes. */
export const DEFAULT_SCHEDULE = '*/30 * * * *';

/** `schedule:` — when the daemon runs a sync (cron syntax, 5 fields, or 6 with seconds first). */
export const scheduleSchema = z
  .string()
  .superRefine((value, ctx) => {
    const result = validateCron(value);
    if (!result.valid) {
      const first = result.errors[0];
      ctx.addIssue({ code: 'custom', message: `invalid cron expression "${value}": ${first ? `${first.field}: ${first.message}` : 'not a cron expression'}` });
    }
  })
  .default(DEFAULT_SCHEDULE)
  .describe('Daemon mode: cron expression of the runs (5 fields, or 6 with seconds first), read in `timezone`. The daemon also runs once at start.');

/** True when `zone` is an IANA time zone this Node.js knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** `timezone:` — the IANA time zone the schedule is read in. */
export const timezoneSchema = z
  .string()
  .refine(isTimeZone, { message: 'unknown time zone (use an IANA name such as UTC or Europe/Berlin)' })
  .default('UTC')
  .describe('IANA time zone the schedule is read in (UTC, Europe/Berlin, Asia/Shanghai, ...).');

/**
 * `shutdown_timeout`: how long in-flight requests may take after SIGTERM/SIGINT before they are aborted. Written as a
 * duration (`20s`) in the file; milliseconds in the loaded config.
 */
export const shutdownTimeoutSchema = durationSchema('expected a duration such as 20s, 500ms or 1m')
  .prefault('20s')
  .describe(
    'On SIGTERM or SIGINT no new write or retry starts; requests in flight get this long, then are aborted; the state DB records what is known and the process exits within this plus 2 s (exit 143 for SIGTERM, 130 for SIGINT). The Helm chart sets terminationGracePeriodSeconds to this plus 10 s.',
  );

/** `host:port` of a listener; `host` may be an IPv4 address, a name, or `[v6]`. */
const LISTEN = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** The message of a bad listen address (metrics.listen and `daemon --listen` say the same). */
export const LISTEN_MESSAGE = 'expected host:port (e.g. 0.0.0.0:9464), or "" to turn the listener off';

/** Whether `v` is a valid listen address: `host:port` with a port up to 65535, or "" (off). */
export function isListenAddress(v: string): boolean {
  return v === '' || (LISTEN.test(v) && Number(LISTEN.exec(v)![1]) <= 65535);
}

/** `metrics:` — the operations HTTP listener and the Pushgateway for CronJob runs. */
export const metricsConfigSchema = z
  .strictObject({
    listen: z
      .string()
      .refine(isListenAddress, { message: LISTEN_MESSAGE })
      .default('0.0.0.0:9464')
      .describe('Daemon mode: host:port of the HTTP listener serving /metrics, /healthz, /readyz and /status; "" turns it off. Port 0 takes a free port.'),
    pushgateway_url: z
      .union([z.literal(''), httpUrlSchema()])
      .default('')
      .describe('`orgsync sync`: push the run\'s metrics to this Prometheus Pushgateway at the end (job "orgsync", grouped by sync id); "" turns it off.'),
    tls: z
      .strictObject({
        cert_file: z.string().min(1).describe('PEM certificate (chain) of the listener; relative paths resolve against the config file\'s folder.'),
        key_file: z.string().min(1).describe('PEM private key of that certificate.'),
      })
      .optional()
      .describe('Serve the listener over HTTPS with this certificate and key; both files are read again when they change (a renewed certificate applies to the next connection). Absent: plain HTTP.'),
  })
  .prefault({})
  .describe('Metrics and health endpoints.');

/** `daemon:` — what the daemon accepts from outside (issue 22). */
export const daemonConfigSchema = z
  .strictObject({
    trigger_token_file: z
      .string()
      .default('')
      .describe('File holding the bearer token that POST /sync (a run now) and POST /sync?only=SELECTOR require on the daemon\'s listener; "" turns the trigger endpoints off (404). Read at every request, so a rotated Secret applies at once.'),
    read_token_file: z
      .string()
      .default('')
      .describe('File holding the bearer token that the listener\'s routes carrying personal data require (GET /plan, /plan.json, /runs/<id>, /records/<selector>/history); "" keeps those routes closed (404 naming this key). Read at every request; the trigger token does not open them.'),
  })
  .prefault({})
  .describe('The daemon\'s trigger endpoints and the token of its personal-data routes.');

/** The validated `metrics:` block. */
export type MetricsConfig = z.infer<typeof metricsConfigSchema>;

/** pino's levels, most verbose first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** `log:` — logging. */
export const logConfigSchema = z
  .strictObject({
    level: z.enum(LOG_LEVELS).default('info').describe('Lowest level written: trace, debug, info, warn, error, fatal or silent.'),
    format: z
      .enum(['auto', 'json', 'pretty'])
      .default('auto')
      .describe('auto: readable lines when the output is a terminal, JSON lines otherwise; json: always JSON (one object per line); pretty: always readable.'),
    redact: z
      .array(z.string().min(1))
      .default([])
      .describe('Extra field paths to redact in log lines (pino paths such as `source.headers.x-api-token`), beyond the built-in ones (API keys, passwords, tokens, Authorization headers, secret values from the environment and *_file mounts).'),
    personal_data: z
      .boolean()
      .default(false)
      .describe('false: log lines name records by source id and platform id only (no name, e-mail or phone; the change line with the person\'s name shows only on a terminal at level debug). true: JSON lines also carry that change line with the name (a `detail` field); for short investigations, since logs travel to every pipeline the cluster ships them to.'),
  })
  .prefault({})
  .describe('Logs: pino JSON lines (stdout; stderr for `plan --output json`), one run_id on every line of a run.');

/** The validated `log:` block. */
export type LogConfig = z.infer<typeof logConfigSchema>;
