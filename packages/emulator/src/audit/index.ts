/**
 * The audit area (spec "Cross-user audit"): reads of users' private KBs, each written to the audit log, and the
 * admin route that shows the log. README "Cross-user audit".
 */
import type { FastifyInstance } from 'fastify';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { knowledgeOf } from '../kb/index.js';
import { registerAuditRoutes } from './routes.js';
import { AuditStore, migrateAudit } from './store.js';

const stores = new WeakMap<EmulatorContext, AuditStore>();

function storeOf(ctx: EmulatorContext): AuditStore {
  let store = stores.get(ctx);
  if (!store) {
    store = new AuditStore(ctx.db);
    stores.set(ctx, store);
  }
  return store;
}

function registerAdminRoutes(admin: FastifyInstance, ctx: EmulatorContext): void {
  admin.get<{ Querystring: { tenant_id?: string; event_type?: string } }>('/_emulator/audit-log', async (req) => {
    const tenant = req.query.tenant_id === undefined ? undefined : Number(req.query.tenant_id);
    const items = storeOf(ctx)
      .all()
      .filter((r) => (tenant === undefined || r.tenant_id === tenant) && (req.query.event_type === undefined || r.event_type === req.query.event_type));
    return { items };
  });
}

/** The audit area. */
export const auditArea: EmulatorArea = {
  name: 'audit',
  migrate: migrateAudit,
  routes(app, ctx) {
    registerAuditRoutes(app, ctx, knowledgeOf(ctx), storeOf(ctx));
  },
  adminRoutes: registerAdminRoutes,
};
