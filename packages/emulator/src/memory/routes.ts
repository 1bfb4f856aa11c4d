/**
 * The memory endpoints (spec "Memory"): recall, events, list, delete. The tenant comes from the credential; a
 * `tenant_id` in a body or query is refused with 400. Other properties the spec does not list are ignored.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { badRequest, envelope } from '../core/errors.js';
import type { EmulatorContext, RouteAuth } from '../core/types.js';
import { MEMORY_SCOPES, type MemoryScope } from '../kb/seed.js';
import { bm25Similarity, queryTerms, roundScore, statsOf, termDoc } from '../kb/text-scoring.js';
import { parseOr400, principalOf, stringError } from '../kb/validation.js';
import { ownedBy, type MemoryCaller, type MemoryRow, type MemoryStore } from './store.js';

const PREFIX = '/api/external/v1';

/** Memory reads: ek_ / st_ with tenant.memory.read. */
export const MEMORY_READ: RouteAuth = { apiKey: 'tenant.memory.read', sessionToken: 'tenant.memory.read', shape: 'envelope' };
/** Memory writes: ek_ / st_ with tenant.memory.write. */
export const MEMORY_WRITE: RouteAuth = { apiKey: 'tenant.memory.write', sessionToken: 'tenant.memory.write', shape: 'envelope' };

/** The scopes a recall searches when it names none: all four (group_shared only finds something with a group_id). */
export const DEFAULT_RECALL_SCOPES: readonly MemoryScope[] = MEMORY_SCOPES;
/** The scope GET /memories lists when it names none. */
export const DEFAULT_LIST_SCOPE: MemoryScope = 'user_long_term';
/** The scope an event is written to when it names none: its group's shared memory with a group_id, else its session. */
export function defaultEventScope(groupId: string | undefined): MemoryScope {
  return groupId ? 'group_shared' : 'session';
}

/** The fault switch that makes one scope's backend fail: `memory_scope_failure:<scope>`. */
export const scopeFailureSwitch = (scope: MemoryScope): string => `memory_scope_failure:${scope}`;

const id = z.string(stringError).min(1, 'must not be empty').max(256, 'must be at most 256 characters');
const scope = z.enum(MEMORY_SCOPES, { error: `must be one of ${MEMORY_SCOPES.join(', ')}` });
const limit = z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(50, 'must be at most 50');
/** GET /memories: the spec gives a default (10) but no maximum; 200 matches the other list endpoints. */
const queryLimit = z
  .string()
  .regex(/^\d+$/, 'must be an integer')
  .transform(Number)
  .pipe(z.number().min(1, 'must be at least 1').max(200, 'must be at most 200'));

const recallBody = z.looseObject({
  user_id: id,
  agent_id: id,
  session_id: id,
  query: z.string(stringError).min(1, 'must not be empty').max(4000, 'must be at most 4000 characters'),
  group_id: z.string().optional(),
  scopes: z.array(scope).min(1, 'must name at least one scope').optional(),
  limit: limit.default(10),
});

const eventBody = z.looseObject({
  user_id: id,
  agent_id: id,
  session_id: id,
  content: z.string(stringError).min(1, 'must not be empty').max(10_000, 'must be at most 10000 characters'),
  group_id: z.string().optional(),
  /** Extension: the scope to write to (default: `group_shared` with a group_id, else `session`). */
  scope: scope.optional(),
});

const listQuery = z.looseObject({
  user_id: id,
  agent_id: id,
  session_id: id,
  group_id: z.string().optional(),
  scope: scope.default(DEFAULT_LIST_SCOPE),
  limit: queryLimit.default(10),
});

const deleteQuery = z.looseObject({
  user_id: id,
  agent_id: id,
  session_id: id,
  group_id: z.string().optional(),
});

function refuseTenantId(value: unknown, where: string): void {
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, 'tenant_id')) {
    throw badRequest(`${where}tenant_id: not accepted; the tenant is taken from the credential`);
  }
}

function callerOf(req: FastifyRequest, keys: { user_id: string; agent_id: string; session_id: string; group_id?: string | undefined }): MemoryCaller {
  return { tenantId: principalOf(req).tenantId, userId: keys.user_id, agentId: keys.agent_id, sessionId: keys.session_id, groupId: keys.group_id ?? '' };
}

/**
 * Scores memories by relevance to the query: BM25 similarity in [0, 1] over the corpus of every memory the recall
 * searches (so that scores of different scopes compare). Memories sharing no word with the query score 0 and still
 * come back after the others, as a vector search would return its nearest neighbours.
 */
export function scoreMemories(rows: readonly MemoryRow[], query: string): Map<string, number> {
  const terms = queryTerms(query);
  const docs = rows.map((r) => termDoc(r.content));
  const stats = statsOf(docs);
  return new Map(rows.map((row, i) => [row.id, bm25Similarity(terms, docs[i]!, stats)]));
}

/** Registers the memory routes. */
export function registerMemoryRoutes(app: FastifyInstance, ctx: EmulatorContext, store: MemoryStore): void {
  const read = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(MEMORY_READ) };
  const write = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(MEMORY_WRITE) };
  const failing = (s: MemoryScope): boolean => Boolean(ctx.switches.get(scopeFailureSwitch(s)));

  app.post(`${PREFIX}/memories/recall`, read, async (req) => {
    refuseTenantId(req.body, '');
    const body = parseOr400(recallBody, req.body);
    const caller = callerOf(req, body);
    const scopes = [...new Set(body.scopes ?? DEFAULT_RECALL_SCOPES)];
    // A failing scope backend reduces the answer instead of failing it.
    const degraded = scopes.some(failing);
    const perScope = scopes.filter((s) => !failing(s)).map((s) => ({ scope: s, rows: store.inScope(s, caller) }));
    const scores = scoreMemories(perScope.flatMap((p) => p.rows), body.query);
    const items: { id: string; content: string; score: number; scope: MemoryScope; seq: number }[] = [];
    for (const { scope: s, rows } of perScope) {
      const ranked = rows.map((row) => ({ row, score: scores.get(row.id) ?? 0 })).sort((a, b) => b.score - a.score || b.row.seq - a.row.seq);
      for (const { row, score } of ranked.slice(0, body.limit)) items.push({ id: row.id, content: row.content, score: roundScore(score), scope: s, seq: row.seq });
    }
    items.sort((a, b) => b.score - a.score || b.seq - a.seq);
    return envelope(req, { items: items.map(({ seq: _seq, ...item }) => item), degraded });
  });

  app.post(`${PREFIX}/memories/events`, write, async (req) => {
    refuseTenantId(req.body, '');
    const body = parseOr400(eventBody, req.body);
    const target = body.scope ?? defaultEventScope(body.group_id);
    if (target === 'group_shared' && !body.group_id) throw badRequest('group_id: required for scope group_shared');
    store.insert({
      id: randomUUID(),
      tenant_id: principalOf(req).tenantId,
      scope: target,
      user_id: body.user_id,
      agent_id: body.agent_id,
      session_id: body.session_id,
      group_id: body.group_id ?? '',
      content: body.content,
      created_at: ctx.clock.now(),
    });
    return envelope(req, { ok: true });
  });

  app.get(`${PREFIX}/memories`, read, async (req) => {
    refuseTenantId(req.query, 'query.');
    const query = parseOr400(listQuery, req.query, 'query');
    if (failing(query.scope)) return envelope(req, { items: [], degraded: true });
    const rows = store.inScope(query.scope, callerOf(req, query)).slice(0, query.limit);
    return envelope(req, { items: rows.map((r) => ({ id: r.id, content: r.content, score: 1, scope: r.scope })), degraded: false });
  });

  app.delete<{ Params: { id: string } }>(`${PREFIX}/memories/:id`, write, async (req) => {
    refuseTenantId(req.query, 'query.');
    const query = parseOr400(deleteQuery, req.query, 'query');
    const row = store.byId(req.params.id);
    // Someone else's, unknown, or in a scope the caller's keys do not reach: counted, never deleted.
    if (!row || !ownedBy(row, callerOf(req, query))) return envelope(req, { deleted: 0, rejected: 1 });
    return envelope(req, { deleted: store.delete(row.id), rejected: 0 });
  });
}
