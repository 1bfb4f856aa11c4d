/**
 * The knowledge-base endpoints (spec "Knowledge bases"): KB list / create / detail, documents list / upload / detail,
 * single-KB retrieval, and POST /knowledge/retrieve for agent runtimes. Envelope bodies; errors in shape 1 with the
 * shape-2 fields alongside (core/errors.ts).
 */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, badRequest, envelope } from '../core/errors.js';
import type { EmulatorContext, RouteAuth } from '../core/types.js';
import { SUPPORTED_MIME_TYPES } from './seed.js';
import { retrieveChunks } from './retrieval.js';
import { DOCUMENT_LIST_LIMIT, type KnowledgeService } from './service.js';
import { roundScore } from './text-scoring.js';
import { parseOr400, principalOf, stringError } from './validation.js';

const PREFIX = '/api/external/v1';
/** The largest document an upload accepts (4 MiB). */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
/** Raw bodies up to this size are read (and refused with 400 beyond MAX_DOCUMENT_BYTES); larger ones get 413. */
const RAW_BODY_CEILING = 64 * 1024 * 1024;

/** KB reads: ek_ / st_ with tenant.kb.read, application JWT with kb.read. */
export const KB_READ: RouteAuth = { apiKey: 'tenant.kb.read', sessionToken: 'tenant.kb.read', appToken: 'kb.read', shape: 'envelope' };
/** KB writes: ek_ / st_ with tenant.kb.write. */
export const KB_WRITE: RouteAuth = { apiKey: 'tenant.kb.write', sessionToken: 'tenant.kb.write', shape: 'envelope' };
/** Agent knowledge retrieval: runtime_access session tokens only. */
export const AGENT_RETRIEVE: RouteAuth = {
  sessionToken: ['tenant.kb.read', 'kb.read', 'svc.kb.search'],
  sessionGrant: 'runtime_access',
  shape: 'envelope',
};

/** The tool name reported by POST /knowledge/retrieve. */
export const AGENT_RETRIEVE_TOOL_NAME = 'knowledge_retrieve';
/** top_k / threshold defaults of retrievals. */
export const RETRIEVE_DEFAULTS = { topK: 5, threshold: 0.2 } as const;

const createKbBody = z.strictObject({
  name: z.string(stringError).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  description: z.string(stringError).max(2000, 'must be at most 2000 characters').default(''),
});

const retrieveBody = z.strictObject({
  query: z.string(stringError).trim().min(1, 'must not be empty'),
  top_k: z.number({ error: 'must be an integer from 1 to 50' }).int('must be an integer').min(1, 'must be at least 1').max(50, 'must be at most 50').default(RETRIEVE_DEFAULTS.topK),
  threshold: z.number({ error: 'must be a number between 0 and 1' }).min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').default(RETRIEVE_DEFAULTS.threshold),
  rerank: z.boolean({ error: 'must be a boolean' }).default(false),
});

const agentRetrieveBody = z.strictObject({
  agent_id: z.string(stringError).regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID'),
  query: z.string(stringError).trim().min(1, 'must not be empty'),
});

const uploadQuery = z.strictObject({
  title: z.string().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  mime_type: z.string().min(1, 'must not be empty').optional(),
});

const EXTENSION_TYPES: Record<string, string> = { txt: 'text/plain', text: 'text/plain', md: 'text/markdown', markdown: 'text/markdown', pdf: 'application/pdf' };

/** `text/plain; charset=utf-8` -> `text/plain`; `text/x-markdown` -> `text/markdown`. */
function normaliseMime(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const base = value.split(';')[0]!.trim().toLowerCase();
  if (base === '' || base === 'application/octet-stream') return undefined;
  return base === 'text/x-markdown' ? 'text/markdown' : base;
}

function mimeFromName(name: string | undefined): string | undefined {
  const ext = name?.toLowerCase().match(/\.([a-z]+)$/)?.[1];
  return ext === undefined ? undefined : EXTENSION_TYPES[ext];
}

/** The document's type: the given one, else the part's / body's own type, else the title's extension, else a PDF header. */
function resolveMime(explicit: string | undefined, carried: string | undefined, title: string | undefined, bytes: Buffer): string {
  const given = explicit !== undefined ? explicit.split(';')[0]!.trim().toLowerCase() : undefined;
  const mime = (given === 'text/x-markdown' ? 'text/markdown' : given) ?? normaliseMime(carried) ?? mimeFromName(title) ??
    (bytes.subarray(0, 5).toString('latin1') === '%PDF-' ? 'application/pdf' : undefined);
  if (mime === undefined) throw badRequest('mime_type: required (send it, or a Content-Type, or a title with a .txt/.md/.pdf extension)');
  if (!(SUPPORTED_MIME_TYPES as readonly string[]).includes(mime)) {
    throw badRequest(`mime_type: unsupported type ${mime} (supported: ${SUPPORTED_MIME_TYPES.join(', ')})`);
  }
  return mime;
}

const tooLarge = (): ApiError => badRequest(`file: larger than the 4 MiB limit (${MAX_DOCUMENT_BYTES} bytes)`);

/** Reads Form A (multipart): `file` (required), `title`, `mime_type`. */
async function readMultipart(req: FastifyRequest): Promise<{ bytes: Buffer; title: string | undefined; mime: string | undefined; partType: string | undefined; fileName: string | undefined }> {
  let bytes: Buffer | undefined;
  let partType: string | undefined;
  let fileName: string | undefined;
  const fields: Record<string, string> = {};
  // The first problem is reported after the whole body has been read, so that the client is never cut off mid-upload.
  let problem: ApiError | undefined;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const content = await (part as MultipartFile).toBuffer();
        if (part.fieldname !== 'file') problem ??= badRequest(`unknown property: ${part.fieldname}`);
        else if (bytes !== undefined) problem ??= badRequest('file: only one file per upload');
        else {
          bytes = content;
          partType = part.mimetype;
          fileName = part.filename;
        }
      } else if (part.fieldname !== 'title' && part.fieldname !== 'mime_type') {
        problem ??= badRequest(`unknown property: ${part.fieldname}`);
      } else {
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw badRequest(`body: not a readable multipart/form-data body (${(err as Error).message})`);
  }
  if (problem) throw problem;
  if (bytes === undefined) throw badRequest('file: required');
  const title = fields.title?.trim();
  if (fields.title !== undefined && title === '') throw badRequest('title: must not be empty');
  if (title !== undefined && title.length > 255) throw badRequest('title: must be at most 255 characters');
  return { bytes, title: title ?? undefined, mime: fields.mime_type, partType, fileName };
}

/** POST /knowledge/retrieve: the chunks of the agent's knowledge bases (in the caller's tenant) that match the query. */
function agentRetrieval(req: FastifyRequest, ctx: EmulatorContext, kb: KnowledgeService): Record<string, unknown> {
  const principal = principalOf(req);
  const body = parseOr400(agentRetrieveBody, req.body);
  if (principal.boundAgentId !== undefined && principal.boundAgentId.toLowerCase() !== body.agent_id.toLowerCase()) {
    throw new ApiError(403, 'agent_mismatch', 'agent_id: the session token is bound to another digital employee');
  }
  const agent = ctx.agents.byId(principal.tenantId, body.agent_id);
  if (!agent || agent.status !== 'active') throw new ApiError(404, 'not_found', 'agent_id: no such digital employee in this tenant');
  const kbIds = agent.knowledge_base_ids.map((id) => id.toLowerCase()).filter((id) => kb.store.kbById(id)?.tenant_id === principal.tenantId);
  const chunks = retrieveChunks(kb.store, kbIds, body.query, { topK: RETRIEVE_DEFAULTS.topK, threshold: RETRIEVE_DEFAULTS.threshold, rerank: false });
  const sources = new Map<string, Record<string, string>>();
  for (const c of chunks) {
    sources.set(c.chunk.document_id, { document_id: c.chunk.document_id, document_title: c.chunk.document_title, knowledge_base_id: c.chunk.kb_id, kb_name: c.chunk.kb_name });
  }
  return envelope(req, {
    tool_name: AGENT_RETRIEVE_TOOL_NAME,
    query: body.query,
    items: chunks.map((c) => ({
      reference_id: c.chunk.id,
      knowledge_base_id: c.chunk.kb_id,
      kb_name: c.chunk.kb_name,
      document_id: c.chunk.document_id,
      score: roundScore(c.similarity),
      content: c.chunk.content,
    })),
    sources: [...sources.values()],
    result_quality: chunks.length > 0 ? 'hit' : 'empty',
  });
}

/** An upload's bytes, title and type, from Form A (multipart) or Form B (raw body with query parameters). */
async function readUpload(req: FastifyRequest): Promise<{ bytes: Buffer; title: string | undefined; mime: string }> {
  if (req.isMultipart()) {
    parseOr400(z.strictObject({}), req.query, 'query');
    const form = await readMultipart(req);
    const title = form.title ?? form.fileName;
    return { bytes: form.bytes, title, mime: resolveMime(form.mime, form.partType, title, form.bytes) };
  }
  const query = parseOr400(uploadQuery, req.query, 'query');
  if (!Buffer.isBuffer(req.body)) throw badRequest('file: required (send the file bytes as the body)');
  return { bytes: req.body, title: query.title, mime: resolveMime(query.mime_type, req.headers['content-type'], query.title, req.body) };
}

/** Reads a raw body whole (up to a ceiling), so that an oversized upload gets a clean 400, not a reset connection. */
function readRawBody(payload: NodeJS.ReadableStream & { destroy(err?: Error): void }, done: (err: Error | null, body: Buffer | undefined) => void): void {
  const kept: Buffer[] = [];
  let size = 0;
  payload.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_DOCUMENT_BYTES + 1) kept.push(chunk);
    if (size > RAW_BODY_CEILING) payload.destroy(new ApiError(413, 'payload_too_large', 'body: too large'));
  });
  payload.on('error', (err) => done(err, undefined));
  payload.on('end', () => (size > MAX_DOCUMENT_BYTES ? done(tooLarge(), undefined) : done(null, Buffer.concat(kept))));
}

/** The document upload route, in its own plugin scope: its body parsers (multipart, raw bytes of any type) stay there. */
async function registerUploadRoute(app: FastifyInstance, kb: KnowledgeService, write: { config: { errorShape: 'envelope' }; onRequest: ReturnType<EmulatorContext['authorize']> }): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, { limits: { fileSize: MAX_DOCUMENT_BYTES, files: 4, fields: 10, parts: 14 } });
    scope.addContentTypeParser('*', (_req, payload, done) => readRawBody(payload, done));
    scope.post<{ Params: { knowledge_base_id: string }; Querystring: Record<string, string> }>(
      `${PREFIX}/knowledge-bases/:knowledge_base_id/documents`,
      { ...write, bodyLimit: RAW_BODY_CEILING },
      async (req) => {
        const row = kb.visibleKb(principalOf(req), req.params.knowledge_base_id);
        const { bytes, title, mime } = await readUpload(req);
        if (bytes.length === 0) throw badRequest('file: empty');
        if (bytes.length > MAX_DOCUMENT_BYTES) throw tooLarge();
        return envelope(req, kb.documentJson(kb.addDocument(row, title?.trim() || 'untitled', mime, bytes)));
      },
    );
  });
}

/** Registers the knowledge-base routes. */
export async function registerKbRoutes(app: FastifyInstance, ctx: EmulatorContext, kb: KnowledgeService): Promise<void> {
  const read = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(KB_READ) };
  const write = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(KB_WRITE) };

  app.get(`${PREFIX}/knowledge-bases`, read, async (req) => {
    const principal = principalOf(req);
    return envelope(req, { items: kb.store.tenantKbs(principal.tenantId).map((row) => kb.kbJson(row)) });
  });

  app.post(`${PREFIX}/knowledge-bases`, write, async (req) => {
    const principal = principalOf(req);
    const body = parseOr400(createKbBody, req.body);
    return envelope(req, kb.kbJson(kb.createKb(principal.tenantId, body.name, body.description)));
  });

  app.get<{ Params: { knowledge_base_id: string } }>(`${PREFIX}/knowledge-bases/:knowledge_base_id`, read, async (req) => {
    return envelope(req, kb.kbJson(kb.visibleKb(principalOf(req), req.params.knowledge_base_id)));
  });

  app.get<{ Params: { knowledge_base_id: string } }>(`${PREFIX}/knowledge-bases/:knowledge_base_id/documents`, read, async (req) => {
    const row = kb.visibleKb(principalOf(req), req.params.knowledge_base_id);
    return envelope(req, { items: kb.store.documents(row.id, DOCUMENT_LIST_LIMIT).map((d) => kb.documentJson(d)) });
  });

  app.get<{ Params: { knowledge_base_id: string; document_id: string } }>(
    `${PREFIX}/knowledge-bases/:knowledge_base_id/documents/:document_id`,
    read,
    async (req) => {
      const row = kb.visibleKb(principalOf(req), req.params.knowledge_base_id);
      return envelope(req, kb.documentJson(kb.documentIn(row, req.params.document_id)));
    },
  );

  app.post<{ Params: { knowledge_base_id: string } }>(`${PREFIX}/knowledge-bases/:knowledge_base_id/retrieve`, read, async (req) => {
    const row = kb.visibleKb(principalOf(req), req.params.knowledge_base_id);
    const body = parseOr400(retrieveBody, req.body);
    const chunks = retrieveChunks(kb.store, [row.id], body.query, { topK: body.top_k, threshold: body.threshold, rerank: body.rerank });
    return envelope(req, {
      knowledge_base_id: row.id,
      total: chunks.length,
      chunks: chunks.map((c) => ({
        content: c.chunk.content,
        document_id: c.chunk.document_id,
        document_title: c.chunk.document_title,
        similarity: roundScore(c.similarity),
      })),
    });
  });

  app.post(`${PREFIX}/knowledge/retrieve`, { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(AGENT_RETRIEVE) }, async (req) => agentRetrieval(req, ctx, kb));

  await registerUploadRoute(app, kb, write);
}
