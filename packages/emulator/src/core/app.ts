/**
 * The emulator app: one fastify instance over one SQLite store, with every EmulatorArea of `areas.ts` mounted.
 * `buildEmulator()` builds it (usable with `app.inject`), `startEmulator()` also listens.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { systemClock, type Clock } from './clock.js';
import { silentLogger, type Logger } from './logger.js';
import { startTranslateServer } from '../translate/index.js';
import { FaultsAndCounts, registerCoreAdminRoutes } from './admin.js';
import { areas as defaultAreas } from './areas.js';
import { apiKeyResolver, CredentialRegistry, makeAuthorize, migrateApiKeys, seedApiKeys } from './credentials.js';
import { ApiError, defaultErrorCode, sendError, type ErrorShape } from './errors.js';
import { TokenBucketLimiter } from './rate-limit.js';
import type { Seed } from './seed.js';
import { parseSeed } from './seed-file.js';
import type { Agent, EmulatorArea, EmulatorContext, OrgDirectory } from './types.js';

/** Options of buildEmulator. */
export interface BuildEmulatorOptions {
  /** The seed (parsed or raw; it is validated either way). */
  seed: Seed | Record<string, unknown>;
  /** SQLite file; in memory when absent. With a file, data survives a restart and seeding is idempotent. */
  dbPath?: string;
  /** Enables the `/_emulator/*` admin routes (Bearer this token). */
  adminToken?: string;
  clock?: Clock;
  logger?: Logger;
  /** The areas to mount (default: all of `areas.ts`). */
  areas?: readonly EmulatorArea[];
}

/** Options of startEmulator. */
export interface StartEmulatorOptions extends BuildEmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 takes a free port. */
  port: number;
  /** Also start the translation API on this port (0: a free one). */
  translatePort?: number;
}

/** A built (not yet listening) emulator. */
export interface BuiltEmulator {
  app: FastifyInstance;
  ctx: EmulatorContext;
  /** Tells the context the URL it is reachable at (startEmulator calls it after listening). */
  setBaseUrl(url: string): void;
  /** Closes the server and the database. */
  close(): Promise<void>;
}

/** A running emulator. */
export interface RunningEmulator {
  url: string;
  ctx: EmulatorContext;
  app: FastifyInstance;
  translateUrl?: string;
  close(): Promise<void>;
}

const unsetDirectory: OrgDirectory = {
  memberByAccountId: () => undefined,
  memberByEmail: () => undefined,
};

/** The error shape of a request: set by authorize, or the route's config, or by its URL. */
function shapeOf(req: FastifyRequest): ErrorShape {
  if (req.errorShape) return req.errorShape;
  const configured = req.routeOptions?.config?.errorShape;
  if (configured) return configured;
  const path = req.url.split('?')[0] ?? '';
  return path.startsWith('/api/external/v1/org/') || path === '/api/external/v1/org' || path.startsWith('/_emulator') ? 'org' : 'envelope';
}

function openDatabase(dbPath: string | undefined): Database.Database {
  const db = new Database(dbPath ?? ':memory:');
  if (dbPath) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return db;
}

function agentsOf(seed: Seed): EmulatorContext['agents'] {
  const all: Agent[] = seed.tenants.flatMap((t) =>
    t.agents.map((a) => ({ id: a.id, tenant_id: t.id, name: a.name, status: a.status, visible_to: a.visible_to, knowledge_base_ids: a.knowledge_base_ids })),
  );
  return {
    byId: (tenantId, id) => all.find((a) => a.tenant_id === tenantId && a.id === id),
    list: (tenantId) => all.filter((a) => a.tenant_id === tenantId),
  };
}

/** The JSON body parser (an empty body is no body) and the error handlers (each error in its route's shape). */
function installBodyParserAndErrors(app: FastifyInstance, logger: Logger): void {
  // Empty JSON bodies (some clients send Content-Type on DELETE) are "no body", not an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'invalid_argument', 'body: not valid JSON'), undefined);
    }
  });

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const shape = shapeOf(req);
    if (err instanceof ApiError) return sendError(reply, shape, err.status, err.code, err.message, err.headers);
    const fe = err as FastifyError;
    if (fe.validation) {
      const first = fe.validation[0];
      const field = first ? `${fe.validationContext ?? 'body'}${first.instancePath.replace(/\//g, '.')}` : 'request';
      return sendError(reply, shape, 400, 'invalid_argument', `${field}: ${first?.message ?? 'invalid'}`);
    }
    const status = fe.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(reply, shape, status, defaultErrorCode(status), fe.message.split('\n')[0] ?? 'bad request');
    }
    logger.error({ err: { name: fe.name, message: fe.message, stack: fe.stack }, url: req.routeOptions.url }, 'emulator request failed');
    return sendError(reply, shape, 500, 'internal_error', 'internal error');
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, shapeOf(req), 404, 'not_found', `no route: ${req.method} ${req.url.split('?')[0]}`));
}

/** Every response's request id and Date (the emulator's clock), the request counts and log line, and (admin) the faults. */
function installHooks(app: FastifyInstance, ctx: EmulatorContext, faults: FaultsAndCounts, faultsOn: boolean): void {
  app.addHook('onSend', async (req, reply) => {
    void reply.header('x-request-id', String(req.id));
    // The platform's own clock, as the `Date` header (the sync takes its mirror watermarks from it): the
    // emulator's clock, not the host's, so a test moving either clock sees what a real skew would do.
    void reply.header('date', new Date(ctx.clock.now()).toUTCString());
  });
  app.addHook('onResponse', async (req, reply) => {
    faults.count(req, reply);
    ctx.logger.debug({ reqId: req.id, method: req.method, route: req.routeOptions.url ?? req.url.split('?')[0], status: reply.statusCode }, 'request');
  });
  if (faultsOn) app.addHook('onRequest', (req, reply) => faults.inject(req, reply));
}

/** Builds the emulator app (routes, hooks, store, seed) without listening. */
export async function buildEmulator(opts: BuildEmulatorOptions): Promise<BuiltEmulator> {
  const seed = parseSeed(opts.seed);
  const db = openDatabase(opts.dbPath);
  try {
    return await assemble(opts, seed, db);
  } catch (err) {
    // A failing area must not leave the database (a --db file) open.
    db.close();
    throw err;
  }
}

async function assemble(opts: BuildEmulatorOptions, seed: Seed, db: Database.Database): Promise<BuiltEmulator> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const registry = new CredentialRegistry();
  const rateLimiter = new TokenBucketLimiter(clock);
  let baseUrl = '';

  const ctx: EmulatorContext = {
    db,
    clock,
    seed,
    credentials: registry,
    directory: unsetDirectory,
    agents: agentsOf(seed),
    adminToken: opts.adminToken,
    baseUrl: () => baseUrl,
    switches: new Map(),
    authorize: makeAuthorize(registry, rateLimiter, () => seed.limits),
    rateLimiter,
    logger,
  };

  migrateApiKeys(db);
  seedApiKeys(db, seed);
  registry.add(apiKeyResolver(db));
  const areaList = opts.areas ?? defaultAreas;
  for (const area of areaList) area.migrate(db);
  for (const area of areaList) area.applySeed?.(ctx);

  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    requestIdHeader: false,
    genReqId: () => `req_${randomUUID().replace(/-/g, '')}`,
  });

  installBodyParserAndErrors(app, logger);

  const faults = new FaultsAndCounts(ctx);
  installHooks(app, ctx, faults, Boolean(opts.adminToken));

  for (const area of areaList) await area.routes(app, ctx);
  if (opts.adminToken) {
    await app.register(async (admin) => {
      registerCoreAdminRoutes(admin, ctx, faults);
      for (const area of areaList) await area.adminRoutes?.(admin, ctx);
    });
  }
  await app.ready();

  let closed = false;
  return {
    app,
    ctx,
    setBaseUrl(url) {
      baseUrl = url;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      db.close();
    },
  };
}

/** Builds the emulator and listens; resolves when it accepts connections. */
export async function startEmulator(opts: StartEmulatorOptions): Promise<RunningEmulator> {
  const built = await buildEmulator(opts);
  const host = opts.host ?? '127.0.0.1';
  try {
    await built.app.listen({ host, port: opts.port });
  } catch (err) {
    await built.close();
    throw err;
  }
  const address = built.app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  built.setBaseUrl(url);

  let translate: { url: string; close(): Promise<void> } | undefined;
  if (opts.translatePort !== undefined) {
    try {
      translate = await startTranslateServer({
        host,
        port: opts.translatePort,
        seed: built.ctx.seed,
        clock: built.ctx.clock,
        logger: built.ctx.logger,
        // The same SQLite file (its own tables, its own connection) so translation data survives a restart too.
        ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
        ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
      });
    } catch (err) {
      await built.close();
      throw err;
    }
  }
  return {
    url,
    ctx: built.ctx,
    app: built.app,
    ...(translate ? { translateUrl: translate.url } : {}),
    async close() {
      await translate?.close();
      await built.close();
    },
  };
}
