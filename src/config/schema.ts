import { z } from 'zod';
import { insecureTransportSchema, refineTransport } from './transport.js';
import { platformConfigSchema, stateConfigSchema, type PlatformConfig } from './platform.js';
import { sourcesConfigSchema } from './sources.js';
import { syncConfigSchema } from './sync.js';
import { notifyConfigSchema } from './notify.js';
import { daemonConfigSchema, logConfigSchema, metricsConfigSchema, scheduleSchema, shutdownTimeoutSchema, timezoneSchema } from './operations.js';

/** The whole config file. Each block's schema lives in its own file; this composes them. */
export const configSchema = z.strictObject({
  platform: platformConfigSchema,
  state: stateConfigSchema.prefault({}),
  sync: syncConfigSchema,
  sources: sourcesConfigSchema,
  schedule: scheduleSchema,
  timezone: timezoneSchema,
  shutdown_timeout: shutdownTimeoutSchema,
  metrics: metricsConfigSchema,
  daemon: daemonConfigSchema,
  log: logConfigSchema,
  notify: notifyConfigSchema.prefault({}),
  allow_insecure_transport: insecureTransportSchema.describe(
    'LABS ONLY. true: allow every block\'s credentials to cross the network in clear (see platform.allow_insecure_transport and a source\'s allow_insecure_transport, which allow it for one block). Every command then warns about it.',
  ),
})
  // Issue 44: no credential crosses a network in clear unless a block (or the file) says so, loudly.
  .superRefine(refineTransport);

/** The validated config body. */
export type ConfigBody = z.infer<typeof configSchema>;

/** A loaded config: the body plus where it came from. Frozen. */
export interface Config extends ConfigBody {
  /** The `platform:` block, with the loader's `key_origins` (where each API key was read). */
  platform: PlatformConfig;
  meta: {
    /** Absolute path of the config file. */
    file: string;
    /** Its folder: relative paths in the config resolve against it. */
    dir: string;
    /** Secret values read from the environment or files, for last-resort redaction. */
    secrets: string[];
    /**
     * Where each secret of a source was read, by its path (`sources[0].bind_password` -> `$LDAP_PASSWORD`, `file
     * /run/secrets/pw (bind_password_file)` or `the config file`), for source errors that name it.
     */
    secret_origins?: Readonly<Record<string, string>>;
  };
}
