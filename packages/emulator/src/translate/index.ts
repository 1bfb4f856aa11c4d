/**
 * The document translation API (the platform's document-translation API specification) on its own listener: own keys, own paths, own store.
 * The emulator CLI calls startTranslateServer and prints `orgsync translate emulator listening on <url>`.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { buildTranslateApp } from './app.js';

export { buildTranslateApp, parseTranslateSeed, type BuildTranslateAppOptions, type TranslateApp } from './app.js';
export { TRANSLATE_ERROR_STATUS, type TranslateErrorCode } from './errors.js';
export { translateSeedSchema, type TranslateSeed } from './seed.js';

/** Options of startTranslateServer. */
export interface StartTranslateServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The whole emulator seed (its `translate:` block is used) or the block itself. */
  seed: unknown;
  /** Drives job progress; default the system clock. */
  clock?: Clock;
  /** A SQLite file for the store; default in memory. */
  dbPath?: string;
  logger?: Logger;
  /** Turns on POST /_emulator/translate/keys (recharge credits, disable keys). */
  adminToken?: string;
}

/** Starts the translation API on its own listener; `url` is `http://HOST:PORT` with the bound port. */
export async function startTranslateServer(opts: StartTranslateServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const { app } = await buildTranslateApp({
    seed: opts.seed,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
  });
  try {
    await app.listen({ host: opts.host, port: opts.port });
  } catch (err) {
    await app.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}
