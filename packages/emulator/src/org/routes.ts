/**
 * The 15 organisation endpoints (spec "Organisation sync"). Bodies are validated strictly: a property the spec does
 * not list is 400 `unknown property: <name>`. Reads take tenant.org.read (ek_ / st_) or contacts.read (application
 * token); writes take only an ek_ key with tenant.org.write.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../core/errors.js';
import { formatIssuePath } from '../core/seed-file.js';
import type { EmulatorContext, RouteAuth } from '../core/types.js';
import type { ListQuery, OrgStore } from './store.js';

/** Credentials accepted by organisation reads. */
export const ORG_READ: RouteAuth = { apiKey: 'tenant.org.read', sessionToken: 'tenant.org.read', appToken: 'contacts.read', shape: 'org' };
/** Credentials accepted by organisation writes. */
export const ORG_WRITE: RouteAuth = { apiKey: 'tenant.org.write', shape: 'org' };

const PREFIX = '/api/external/v1/org';
/** Default and maximum page size. */
export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

const metadata = z.record(z.string(), z.unknown());
const name = z.string().min(1, 'must not be empty');

const departmentCreate = z.strictObject({
  name,
  parent_id: z.string().optional(),
  sort_order: z.number().int().optional(),
  third_department_id: z.string().optional(),
  metadata: metadata.optional(),
});
const departmentPatch = departmentCreate.partial();

const memberCreate = z.strictObject({
  phone: z.string().optional(),
  email: z.string().optional(),
  display_name: z.string().optional(),
  title: z.string().optional(),
  third_user_id: z.string().optional(),
  department_id: z.string().optional(),
  role_code: z.string().optional(),
});
const memberPatch = z.strictObject({
  display_name: z.string().optional(),
  title: z.string().optional(),
  third_user_id: z.string().optional(),
  department_id: z.string().optional(),
  status: z.enum(['active', 'suspended'], { error: 'must be active or suspended' }).optional(),
});

const positionCreate = z.strictObject({
  name,
  description: z.string().optional(),
  sort_order: z.number().int().optional(),
  third_position_id: z.string().optional(),
  metadata: metadata.optional(),
});
const positionPatch = positionCreate.partial();

/** Validates a JSON body; the first problem becomes a 400 naming the field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const value = body === undefined || body === null ? {} : body;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError(400, 'invalid_argument', 'body: expected a JSON object');
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError(400, 'invalid_argument', 'body: invalid');
  if (issue.code === 'unrecognized_keys') throw new ApiError(400, 'invalid_argument', `unknown property: ${issue.keys.join(', ')}`);
  const field = formatIssuePath(issue.path) || 'body';
  const input = (value as Record<string, unknown>)[String(issue.path[0])];
  const message = issue.code === 'invalid_type' && input === undefined && issue.path.length === 1 ? 'is required' : issue.message;
  throw new ApiError(400, 'invalid_argument', `${field}: ${message}`);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

type ListKind = 'departments' | 'members' | 'positions';

/** Cursor: base64url JSON naming the list, the walk mode and the last position (opaque to callers). */
function encodeCursor(kind: ListKind): (q: ListQuery, last: { seq: number; rev: number }) => string {
  return (q, last) => {
    const value = q.mode === 'seq' ? { k: kind, m: 's', a: last.seq } : { k: kind, m: 'r', a: last.rev, s: q.since };
    return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  };
}

/** Reads cursor, limit and updated_since of a list request. */
export function parseListQuery(kind: ListKind, query: unknown): ListQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const one = (key: string): string | undefined => {
    const v = q[key];
    if (Array.isArray(v)) throw new ApiError(400, 'invalid_argument', `${key}: give it once`);
    return typeof v === 'string' ? v : undefined;
  };
  const limitText = one('limit');
  let limit = PAGE_DEFAULT;
  if (limitText !== undefined) {
    if (!/^\d+$/.test(limitText)) throw new ApiError(400, 'invalid_argument', 'limit: must be an integer');
    limit = Number(limitText);
    if (limit < 1) throw new ApiError(400, 'invalid_argument', 'limit: must be at least 1');
    if (limit > PAGE_MAX) throw new ApiError(400, 'invalid_argument', `limit: must be at most ${PAGE_MAX}`);
  }
  const sinceText = one('updated_since');
  let since: number | undefined;
  if (sinceText !== undefined && sinceText !== '') {
    since = RFC3339.test(sinceText) ? Date.parse(sinceText.replace(' ', 'T')) : NaN;
    if (Number.isNaN(since)) throw new ApiError(400, 'invalid_argument', 'updated_since: must be an RFC 3339 date-time');
  }
  const cursor = one('cursor');
  if (cursor !== undefined && cursor !== '') {
    let decoded: { k?: unknown; m?: unknown; a?: unknown; s?: unknown };
    try {
      decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof decoded;
    } catch {
      throw new ApiError(400, 'invalid_argument', 'cursor: not a cursor of this list');
    }
    const after = decoded.a;
    if (decoded?.k !== kind || typeof after !== 'number' || !Number.isInteger(after)) throw new ApiError(400, 'invalid_argument', 'cursor: not a cursor of this list');
    if (decoded.m === 's') return { mode: 'seq', after, limit };
    if (decoded.m === 'r' && typeof decoded.s === 'number') return { mode: 'rev', after, since: decoded.s, limit };
    throw new ApiError(400, 'invalid_argument', 'cursor: not a cursor of this list');
  }
  return since === undefined ? { mode: 'seq', after: 0, limit } : { mode: 'rev', after: 0, since, limit };
}

function tenantOf(req: FastifyRequest): number {
  const principal = req.principal;
  if (!principal) throw new ApiError(401, 'invalid_api_key', 'missing credential');
  return principal.tenantId;
}

function param(req: FastifyRequest, name: string): string {
  return String((req.params as Record<string, string>)[name] ?? '');
}

/** Registers the organisation endpoints. */
export function registerOrgRoutes(app: FastifyInstance, ctx: EmulatorContext, store: OrgStore): void {
  const read = { onRequest: ctx.authorize(ORG_READ), config: { errorShape: 'org' as const } };
  const write = { onRequest: ctx.authorize(ORG_WRITE), config: { errorShape: 'org' as const } };
  const created = (reply: FastifyReply, body: unknown) => reply.code(201).send(body);
  const noContent = (reply: FastifyReply) => reply.code(204).send();
  // List pages come from the store as JSON text already.
  const json = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

  // Departments
  app.get(`${PREFIX}/departments`, read, async (req, reply) =>
    json(reply, store.listDepartments(tenantOf(req), parseListQuery('departments', req.query), encodeCursor('departments'))));
  app.post(`${PREFIX}/departments`, write, async (req, reply) =>
    created(reply, store.createDepartment(tenantOf(req), parseBody(departmentCreate, req.body))));
  app.get(`${PREFIX}/departments/:department_id`, read, async (req) => store.getDepartment(tenantOf(req), param(req, 'department_id')));
  app.patch(`${PREFIX}/departments/:department_id`, write, async (req) =>
    store.updateDepartment(tenantOf(req), param(req, 'department_id'), parseBody(departmentPatch, req.body)));
  app.delete(`${PREFIX}/departments/:department_id`, write, async (req, reply) => {
    store.deleteDepartment(tenantOf(req), param(req, 'department_id'));
    return noContent(reply);
  });

  // Members
  app.get(`${PREFIX}/members`, read, async (req, reply) =>
    json(reply, store.listMembers(tenantOf(req), parseListQuery('members', req.query), encodeCursor('members'))));
  app.post(`${PREFIX}/members`, write, async (req, reply) => created(reply, store.createMember(tenantOf(req), parseBody(memberCreate, req.body))));
  app.get(`${PREFIX}/members/:account_id`, read, async (req) => store.getMember(tenantOf(req), param(req, 'account_id')));
  app.patch(`${PREFIX}/members/:account_id`, write, async (req) =>
    store.updateMember(tenantOf(req), param(req, 'account_id'), parseBody(memberPatch, req.body)));
  app.delete(`${PREFIX}/members/:account_id`, write, async (req, reply) => {
    store.deleteMember(tenantOf(req), param(req, 'account_id'));
    return noContent(reply);
  });

  // Positions
  app.get(`${PREFIX}/positions`, read, async (req, reply) =>
    json(reply, store.listPositions(tenantOf(req), parseListQuery('positions', req.query), encodeCursor('positions'))));
  app.post(`${PREFIX}/positions`, write, async (req, reply) => created(reply, store.createPosition(tenantOf(req), parseBody(positionCreate, req.body))));
  app.get(`${PREFIX}/positions/:position_id`, read, async (req) => store.getPosition(tenantOf(req), param(req, 'position_id')));
  app.patch(`${PREFIX}/positions/:position_id`, write, async (req) =>
    store.updatePosition(tenantOf(req), param(req, 'position_id'), parseBody(positionPatch, req.body)));
  app.delete(`${PREFIX}/positions/:position_id`, write, async (req, reply) => {
    store.deletePosition(tenantOf(req), param(req, 'position_id'));
    return noContent(reply);
  });
}
