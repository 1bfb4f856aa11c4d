/**
 * The translation API's fastify app (build separate from listen): the eight endpoints of
 * the document-translation API specification on their own listener, with their own keys and store.
 */
import { timingSafeEqual } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { systemClock, type Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { TRANSLATE_ERROR_STATUS, TranslateApiError, translateErrorBody } from './errors.js';
import { translateSeedSchema, type TranslateSeed } from './seed.js';
import { TranslateService, type Caller } from './service.js';
import { TranslateStore } from './store.js';

/** Options of buildTranslateApp. */
export interface BuildTranslateAppOptions {
  /** The seed: the whole emulator seed (its `translate:` block is used), the `translate:` block itself, or undefined. */
  seed?: unknown;
  /** Drives job progress; default the system clock. Tests pass a ManualClock. */
  clock?: Clock;
  /** A SQLite file for the store; default in memory. */
  dbPath?: string;
  /** Where log lines go (keys appear only as a prefix); default silent. */
  logger?: Logger;
  /** Turns on `/_emulator/*` admin routes (credits, disabling keys) for callers presenting this bearer token. */
  adminToken?: string;
}

/** The built app and the service behind it (tests may call `service.catchUp()` directly). */
export interface TranslateApp {
  app: FastifyInstance;
  service: TranslateService;
  store: TranslateStore;
}

/** Parses the seed argument: the whole emulator seed, its `translate:` block, or nothing. Throws naming the path. */
export function parseTranslateSeed(seed: unknown): TranslateSeed {
  const isWholeSeed = typeof seed === 'object' && seed !== null && !('api_keys' in seed) && ('translate' in seed || 'tenants' in seed);
  const block = isWholeSeed ? (seed as { translate?: unknown }).translate : seed;
  const parsed = translateSeedSchema.safeParse(block ?? undefined);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = ['translate', ...(issue?.path ?? [])].map(String).join('.');
  throw new Error(`seed ${where}: ${issue?.message ?? 'invalid'}`);
}

const estimateBody = z.looseObject({
  file_id: z.string().min(1),
  target_language: z.string().min(1),
  mode: z.string().min(1).default('standard'),
});
const confirmBody = z.looseObject({ estimate_id: z.string().min(1) });

function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : 'body';
  throw new TranslateApiError('invalid_request', `${path}: ${issue?.message ?? 'invalid'}`);
}

declare module 'fastify' {
  interface FastifyRequest {
    translateCaller?: Caller;
  }
}

function caller(req: FastifyRequest): Caller {
  if (!req.translateCaller) throw new TranslateApiError('invalid_api_key', 'not authenticated');
  return req.translateCaller;
}

/** Errors in the API's shape: its own errors as they are, fastify's 4xx as invalid_request / not_found, the rest 500. */
function installErrorHandlers(app: FastifyInstance, seed: TranslateSeed, logger: Logger): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof TranslateApiError) return reply.code(err.status).send(translateErrorBody(err.code, err.message, String(req.id)));
    const e = err as { code?: string; statusCode?: number; message?: string };
    if (e.code === 'FST_REQ_FILE_TOO_LARGE') {
      return reply.code(TRANSLATE_ERROR_STATUS.file_too_large).send(translateErrorBody('file_too_large', `the file exceeds the limit of ${seed.max_file_bytes} bytes`, String(req.id)));
    }
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      // Malformed JSON, too many multipart parts, a JSON body over fastify's limit: the request is wrong, not the file.
      const code = e.statusCode === 404 ? 'not_found' : 'invalid_request';
      return reply.code(TRANSLATE_ERROR_STATUS[code]).send(translateErrorBody(code, e.message ?? 'invalid request', String(req.id)));
    }
    logger.error({ request_id: req.id, err: e.message }, 'translate: internal error');
    return reply.code(500).send(translateErrorBody('internal_error', 'internal error', String(req.id)));
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send(translateErrorBody('not_found', `no route ${req.method} ${req.url.split('?')[0]}`, String(req.id)));
  });
}

/** The PDF of a POST /v1/files: the first part named "file" (other parts are drained and ignored). */
async function readFilePart(req: FastifyRequest): Promise<{ filename: string; bytes: Buffer }> {
  if (!req.isMultipart()) throw new TranslateApiError('invalid_request', 'file: send multipart/form-data with the PDF in a part named "file"');
  let upload: { filename: string; bytes: Buffer } | undefined;
  for await (const part of req.parts()) {
    if (part.type !== 'file') continue;
    if (part.fieldname !== 'file' || upload) {
      part.file.resume();
      continue;
    }
    // toBuffer throws FST_REQ_FILE_TOO_LARGE past limits.fileSize (rendered as 413 file_too_large).
    upload = { filename: part.filename, bytes: await part.toBuffer() };
  }
  if (!upload) throw new TranslateApiError('invalid_request', 'file: the multipart body has no part named "file"');
  return upload;
}

/** The Idempotency-Key header of POST /v1/translations (required, at most 255 characters). */
function idempotencyKeyOf(req: FastifyRequest): string {
  const raw = req.headers['idempotency-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!key) throw new TranslateApiError('idempotency_key_required', 'POST /v1/translations needs an Idempotency-Key header');
  if (key.length > 255) throw new TranslateApiError('invalid_request', 'Idempotency-Key: at most 255 characters');
  return key;
}

/** The eight /v1 endpoints, in their own plugin scope (with the authentication hook). */
function registerV1Routes(v1: FastifyInstance, service: TranslateService): void {
  // Every /v1 call: the bearer key first, then the job clock catches up so what the caller reads is current.
  v1.addHook('onRequest', async (req) => {
    req.translateCaller = service.authenticate(req.headers.authorization);
    await service.catchUp();
  });

  v1.get('/v1/me', async (req) => service.me(caller(req)));

  v1.post('/v1/files', async (req, reply) => {
    const upload = await readFilePart(req);
    const view = await service.upload(caller(req), upload.filename, upload.bytes);
    return reply.code(201).send(view);
  });

  v1.post('/v1/translation-estimates', async (req, reply) => {
    const body = parseBody(estimateBody, req.body);
    return reply.code(201).send(service.estimate(caller(req), body));
  });

  // The header is checked before the body is parsed, so a missing key is reported whatever the body.
  const onRequest = async (req: FastifyRequest) => void idempotencyKeyOf(req);
  v1.post('/v1/translations', { onRequest }, async (req, reply) => {
    const body = parseBody(confirmBody, req.body);
    const { translation, replayed } = service.confirm(caller(req), idempotencyKeyOf(req), body);
    if (replayed) void reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(translation);
  });

  v1.get<{ Params: { id: string } }>('/v1/translations/:id', async (req) => service.translation(caller(req), req.params.id));

  v1.get<{ Params: { id: string }; Querystring: { after?: string } }>('/v1/translations/:id/events', async (req) => {
    const after = req.query.after === undefined ? 0 : Number(req.query.after);
    if (!Number.isInteger(after) || after < 0) throw new TranslateApiError('invalid_request', 'after: must be a non-negative integer (an event sequence)');
    return service.events(caller(req), req.params.id, after);
  });

  v1.get<{ Params: { id: string; artifactId: string } }>('/v1/translations/:id/artifacts/:artifactId', async (req, reply) => {
    const { row, content } = service.artifact(caller(req), req.params.id, req.params.artifactId);
    return reply
      .header('content-type', row.content_type)
      .header('content-disposition', `attachment; filename="${row.filename.replace(/["\\\r\n]/g, '_')}"`)
      .header('etag', `"${row.sha256}"`)
      .send(content);
  });

  v1.get<{ Querystring: { groupBy?: string } }>('/v1/usage', async (req) => {
    const groupBy = req.query.groupBy ?? 'overview';
    if (groupBy !== 'overview') throw new TranslateApiError('invalid_request', 'groupBy: must be "overview"');
    return service.usageOverview(caller(req));
  });
}

/** Builds the translation API (not listening). Call `app.close()` to close the store too. */
export async function buildTranslateApp(opts: BuildTranslateAppOptions = {}): Promise<TranslateApp> {
  const seed = parseTranslateSeed(opts.seed);
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const store = new TranslateStore(opts.dbPath ?? ':memory:');
  let service: TranslateService;
  try {
    service = new TranslateService({ store, seed, clock, logger });
    service.applySeed();
  } catch (err) {
    store.close();
    throw err;
  }

  let requestCount = 0;
  // No fastify logger: its request lines would carry headers in error cases; we log what we choose, keys as prefixes.
  const app = Fastify({ logger: false, genReqId: () => `tr-req-${++requestCount}` });
  app.addHook('onClose', async () => {
    // Let a catch-up in flight finish before the database closes.
    await service.catchUp().catch(() => {});
    store.close();
  });
  await app.register(multipart, {
    limits: { fileSize: seed.max_file_bytes, files: 4, fields: 10, parts: 20 },
  });

  installErrorHandlers(app, seed, logger);
  await app.register(async (v1) => registerV1Routes(v1, service));

  if (opts.adminToken) registerAdminRoutes(app, service, opts.adminToken);
  return { app, service, store };
}

/**
 * `/_emulator/*` on the translation listener (only with an admin token): recharge credits and disable or enable a key,
 * addressed by its prefix (the secret never travels). The web application does these in the real service.
 */
function registerAdminRoutes(app: FastifyInstance, service: TranslateService, adminToken: string): void {
  const expected = Buffer.from(adminToken);
  const body = z.strictObject({ key_prefix: z.string().min(1), add_credits: z.number().int().optional(), disabled: z.boolean().optional() });
  app.post('/_emulator/translate/keys', async (req) => {
    const presented = Buffer.from(/^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new TranslateApiError('invalid_api_key', 'admin routes need Authorization: Bearer <admin token>');
    }
    const input = parseBody(body, req.body);
    const key = service.store.allKeys().find((k) => k.key_prefix === input.key_prefix);
    if (!key) throw new TranslateApiError('not_found', `key_prefix: no key ${input.key_prefix}`);
    if (input.add_credits !== undefined) service.store.addCredits(key.id, input.add_credits);
    if (input.disabled !== undefined) service.store.setDisabled(key.id, input.disabled);
    const after = service.store.keyById(key.id);
    return { key_prefix: after?.key_prefix, name: after?.name, available_credits: after?.credits, status: after?.disabled ? 'disabled' : 'active' };
  });
}
