import { z } from 'zod';
import { httpUrlSchema, insecureTransportSchema } from './transport.js';

/** `platform:` — where the platform is and how fast orgsync may talk to it. */
export const platformConfigSchema = z
  .strictObject({
    base_url: httpUrlSchema().describe('Base address of the platform (http:// or https://; http:// only to the loopback interface, since the API key travels with every request); paths /api/external/v1/... are appended.'),
    allow_insecure_transport: insecureTransportSchema,
    api_key: z.string().min(1).optional().describe('The ek_ API key (scopes tenant.org.read and tenant.org.write). Use ${ENV} or api_key_file.'),
    api_keys: z
      .array(
        z
          .strictObject({
            key: z.string().min(1).describe('The ek_ API key: "${ENV}" or key_file.'),
          })
          .describe('One API key of the tenant: `key` or `key_file` (a Secret mount).'),
      )
      .min(1)
      .optional()
      .describe(
        'Several ek_ API keys of the same tenant (each {key} or {key_file}); requests are spread over them (and api_key, when also given), each paced at requests_per_second, all together at most tenant_requests_per_second.',
      ),
    requests_per_second: z.number().positive().max(10_000).default(100).describe('Pacing: requests per second for each key (the platform allows 100 per key).'),
    tenant_requests_per_second: z
      .number()
      .positive()
      .max(10_000)
      .default(100)
      .describe(
        "The share of the tenant's request budget (500/s on the platform) this sync may use with all its keys together; never below requests_per_second. Default 100, not 500: the tenant's agents and other integrations share that budget.",
      ),
    concurrency: z.number().int().min(1).max(64).default(8).describe('Writes in flight at once; with several keys raise it with the total rate (docs/operations.md, "Several API keys").'),
    timeout_ms: z.number().int().min(100).default(30_000).describe('Per-request timeout.'),
    max_attempts: z.number().int().min(1).max(20).default(6).describe('Attempts per request for 429, 500 and timeouts; an outage (refused or reset connections, 502/503/504) is retried until max_retry_time_ms is spent.'),
    max_retry_time_ms: z.number().int().min(0).default(120_000).describe('Total time budget for retries of one request.'),
  })
  .describe('The platform API and its pacing.');

/**
 * The loaded `platform:` block. Beside the file's keys, the loader adds `key_origins`: for each key setting
 * (`platform.api_key`, `platform.api_keys[1]`) where it was read (`$ORGSYNC_API_KEY`, `file /run/secrets/key`, `the
 * config file`), so that a refused key's message says which setting to fix. Never the key itself.
 */
export type PlatformConfig = z.infer<typeof platformConfigSchema> & { key_origins?: Readonly<Record<string, string>> };

/**
 * The `platform:` block's defaults, read off the schema (the one place they are written), for a client built without
 * a config file (tests, benchmarks).
 */
export const PLATFORM_DEFAULTS: Readonly<PlatformConfig> = platformConfigSchema.parse({ base_url: 'http://localhost/' });

/** The shape of a platform API key (the spec: `ek_<prefix>_<secret>`). */
const API_KEY_SHAPE = /^ek_[A-Za-z0-9]+_[A-Za-z0-9_-]+$/;

/**
 * One warning per configured key that does not look like an API key of the platform (`ek_<prefix>_<secret>`): a
 * session token (`st_`) cannot write and is short-lived; anything else is refused with a 401. Names the setting and
 * where it was read, never the key.
 */
export function apiKeyShapeWarnings(platform: PlatformConfig): string[] {
  const keys: [string, string][] = [];
  if (platform.api_key !== undefined) keys.push(['platform.api_key', platform.api_key]);
  (platform.api_keys ?? []).forEach((k, i) => keys.push([`platform.api_keys[${i}]`, k.key]));
  const warnings: string[] = [];
  for (const [setting, key] of keys) {
    if (API_KEY_SHAPE.test(key)) continue;
    const from = platform.key_origins?.[setting];
    const what = key.startsWith('st_') ? 'a session token (st_), which cannot write and expires' : 'no API key of the platform';
    warnings.push(`${setting}${from ? ` (read from ${from})` : ''}: the value looks like ${what}; platform keys read ek_<prefix>_<secret> (created in the tenant's admin console, scopes tenant.org.read and tenant.org.write)`);
  }
  return warnings;
}

/**
 * `state:` — the local SQLite state DB (mirror, ownership, run history). The durations `full_walk_every`,
 * `busy_timeout` and `lease_ttl` are written as strings in the file (`24h`, `10s`) and are milliseconds in the
 * loaded config.
 */
export const stateConfigSchema = z
  .strictObject({
    path: z.string().min(1).default('./var/orgsync.db').describe('SQLite file; relative paths resolve against the config file\'s folder.'),
    mirror_overlap_seconds: z.number().int().min(0).default(120).describe('Incremental refresh re-reads this many seconds before the watermark.'),
    full_walk_every: durationSchema('expected a duration such as 24h, 90m, 1h30m or 3600s')
      .prefault('24h')
      .describe('Take a full walk (and drop records it did not see) when the last one is older than this (e.g. 24h, 90m, 1h30m).'),
    busy_timeout: durationSchema('expected a duration such as 10s, 30s or 500ms')
      .prefault('10s')
      .describe('How long a state DB statement waits for another process\'s lock before it fails; a write whose result still cannot be recorded stops the run (exit 1), naming the file and what holds it.'),
    lease_ttl: durationSchema('expected a duration of at least 3s, such as 60s or 2m', 3000)
      .prefault('60s')
      .describe('How long the state DB\'s lease lives without renewal; it is renewed every third of this. A writer that cannot renew in time (frozen, paused) stops writing; another process may take the lease over once it expired.'),
    history_days: z
      .number()
      .int()
      .min(1)
      .default(90)
      .describe('How many days the per-record history of writes (`orgsync history`) is kept; older entries are pruned at the end of each run.'),
  })
  .describe('Local state: the mirror of the platform and orgsync\'s own records.');

export type StateConfig = z.infer<typeof stateConfigSchema>;

/**
 * A duration setting: written as a string in the file (`24h`, `90m`, `500ms`), a number of milliseconds in the loaded
 * config (the key keeps its name; only its value is parsed, once, here). `minMs`: the smallest duration accepted.
 * Defaults are given with `.prefault('24h')`, so that they are parsed like a written value.
 */
export function durationSchema(message: string, minMs = 1): z.ZodPipe<z.ZodString, z.ZodTransform<number, string>> {
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < minMs) {
      ctx.addIssue({ code: 'custom', message, input: text });
      return z.NEVER;
    }
    return ms;
  });
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration such as `24h`, `90m`, `1h30m`, `3600s`, `500ms` or `1d` into milliseconds; undefined when invalid or zero. */
export function parseDuration(text: string): number | undefined {
  const parts = /^\s*((?:\d+(?:\.\d+)?(?:ms|s|m|h|d)\s*)+)$/.exec(text);
  if (!parts) return undefined;
  let total = 0;
  for (const [, n, unit] of parts[1]!.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) total += Number(n) * DURATION_UNITS[unit!]!;
  return total > 0 ? Math.round(total) : undefined;
}
