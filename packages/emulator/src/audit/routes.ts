/**
 * Cross-user audit reads (spec "Cross-user audit"): a user's private KBs, one of them, and its documents (metadata
 * only). Each call that passes authentication writes an audit record, whatever its outcome (200 or 404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, envelope } from '../core/errors.js';
import type { EmulatorContext, Principal, RouteAuth } from '../core/types.js';
import { isUuid } from '../kb/ids.js';
import { DOCUMENT_LIST_LIMIT, kbNotFound, type KnowledgeService } from '../kb/service.js';
import type { KbRow } from '../kb/store.js';
import { principalOf } from '../kb/validation.js';
import { USER_KB_INSPECT, type AuditActor, type AuditStore } from './store.js';

const PREFIX = '/api/external/v1/users';

/** Listing a user's private KBs and reading one: tenant.kb.list_user_private (ek_ / st_). */
export const AUDIT_LIST: RouteAuth = { apiKey: 'tenant.kb.list_user_private', sessionToken: 'tenant.kb.list_user_private', shape: 'envelope' };
/** Reading the documents of a user's private KB: tenant.kb.read_user_private (ek_ / st_). */
export const AUDIT_READ: RouteAuth = { apiKey: 'tenant.kb.read_user_private', sessionToken: 'tenant.kb.read_user_private', shape: 'envelope' };

function actorOf(p: Principal): AuditActor {
  const actor: AuditActor = { credential_kind: p.kind, credential_id: p.credentialId };
  if (p.clientId !== undefined) actor.client_id = p.clientId;
  const account = p.accountId ?? p.boundAccountId;
  if (account !== undefined) actor.account_id = account;
  return actor;
}

/** Registers the three audit routes. */
export function registerAuditRoutes(app: FastifyInstance, ctx: EmulatorContext, kb: KnowledgeService, audit: AuditStore): void {
  /** Runs an audited read: the record is written for success and failure alike. */
  const audited = async (
    req: FastifyRequest,
    userId: string,
    action: string,
    kbId: string | null,
    read: () => { data: unknown; count: number | null },
  ): Promise<Record<string, unknown>> => {
    const principal = principalOf(req);
    const record = (status: number, count: number | null): void =>
      audit.append(
        { event_type: USER_KB_INSPECT, tenant_id: principal.tenantId, actor: actorOf(principal), target_user_id: userId, action, knowledge_base_id: kbId, outcome_status: status, result_count: count },
        ctx.clock.now(),
      );
    try {
      const result = read();
      record(200, result.count);
      return envelope(req, result.data);
    } catch (err) {
      record(err instanceof ApiError ? err.status : 500, null);
      throw err;
    }
  };

  const userOf = (principal: Principal, userId: string): string => {
    const member = isUuid(userId) ? ctx.directory.memberByAccountId(principal.tenantId, userId) : undefined;
    if (!member || member.tenant_id !== principal.tenantId) throw new ApiError(404, 'not_found', 'user not found in this tenant');
    return member.account_id;
  };

  const privateKbOf = (principal: Principal, userId: string, kbId: string): KbRow => {
    const account = userOf(principal, userId);
    const row = isUuid(kbId) ? kb.store.kbById(kbId) : undefined;
    if (!row || row.tenant_id !== principal.tenantId || row.space_kind !== 'personal' || kb.ownerOf(row) !== account) throw kbNotFound();
    return row;
  };

  const list = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(AUDIT_LIST) };
  const readDocs = { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(AUDIT_READ) };

  app.get<{ Params: { user_id: string } }>(`${PREFIX}/:user_id/knowledge-bases`, list, async (req) =>
    audited(req, req.params.user_id, 'list_knowledge_bases', null, () => {
      const principal = principalOf(req);
      const rows = kb.personalKbsOf(principal.tenantId, userOf(principal, req.params.user_id));
      return { data: { items: rows.map((r) => kb.kbJson(r)) }, count: rows.length };
    }),
  );

  app.get<{ Params: { user_id: string; knowledge_base_id: string } }>(`${PREFIX}/:user_id/knowledge-bases/:knowledge_base_id`, list, async (req) =>
    audited(req, req.params.user_id, 'read_knowledge_base', req.params.knowledge_base_id, () => ({
      data: kb.kbJson(privateKbOf(principalOf(req), req.params.user_id, req.params.knowledge_base_id)),
      count: 1,
    })),
  );

  app.get<{ Params: { user_id: string; knowledge_base_id: string } }>(`${PREFIX}/:user_id/knowledge-bases/:knowledge_base_id/documents`, readDocs, async (req) =>
    audited(req, req.params.user_id, 'list_documents', req.params.knowledge_base_id, () => {
      const row = privateKbOf(principalOf(req), req.params.user_id, req.params.knowledge_base_id);
      const docs = kb.store.documents(row.id, DOCUMENT_LIST_LIMIT);
      return { data: { items: docs.map((d) => kb.documentJson(d)) }, count: docs.length };
    }),
  );
}
