/**
 * The messaging area (spec "System notification", "Proactive chat message"): direct conversations, notifications,
 * chat history, the EMP block registry, and admin routes to inspect what a client cannot see.
 * README "Notifications and chat".
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../core/errors.js';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { isoTime } from '../kb/ids.js';
import { parseOr400 } from '../kb/validation.js';
import { EmpRegistry } from './emp-registry.js';
import { CHAT_DELIVERY_FAILURE_SWITCH, registerMessagingRoutes } from './routes.js';
import { messageJson, migrateMessaging, MessagingStore } from './store.js';

interface MessagingState {
  store: MessagingStore;
  registry: EmpRegistry;
}

const states = new WeakMap<EmulatorContext, MessagingState>();

function stateOf(ctx: EmulatorContext): MessagingState {
  let state = states.get(ctx);
  if (!state) {
    state = { store: new MessagingStore(ctx.db, ctx.clock), registry: new EmpRegistry(ctx.seed.emp_block_registry) };
    states.set(ctx, state);
  }
  return state;
}

const filters = z.looseObject({ tenant_id: z.string().regex(/^\d+$/).transform(Number).optional(), user_id: z.string().optional(), agent_id: z.string().optional() });

function registerAdminRoutes(admin: FastifyInstance, ctx: EmulatorContext): void {
  const { store } = stateOf(ctx);
  const matches = (row: { tenant_id: number; user_id: string; agent_id: string }, f: z.infer<typeof filters>): boolean =>
    (f.tenant_id === undefined || row.tenant_id === f.tenant_id) && (f.user_id === undefined || row.user_id === f.user_id) && (f.agent_id === undefined || row.agent_id === f.agent_id);

  admin.get('/_emulator/notifications', async (req) => {
    const f = parseOr400(filters, req.query, 'query');
    const items = store
      .notifications()
      .filter((n) => matches(n, f))
      .map(({ seq: _seq, created_at, ...n }) => ({ ...n, delivered_at: isoTime(created_at) }));
    return { items };
  });
  admin.get('/_emulator/conversations', async (req) => {
    const f = parseOr400(filters, req.query, 'query');
    const items = store
      .conversations()
      .filter((c) => matches(c, f))
      .map((c) => ({ ...c, created_at: isoTime(c.created_at), message_count: store.messages(c.conversation_id).length }));
    return { items };
  });
  admin.get<{ Params: { conversation_id: string } }>('/_emulator/conversations/:conversation_id/messages', async (req) => {
    if (!store.conversationById(req.params.conversation_id)) throw new ApiError(404, 'not_found', 'no such conversation');
    return { items: store.messages(req.params.conversation_id).map(messageJson) };
  });
  admin.put('/_emulator/chat/delivery-failure', async (req) => {
    const body = parseOr400(z.strictObject({ failing: z.boolean() }), req.body);
    if (body.failing) ctx.switches.set(CHAT_DELIVERY_FAILURE_SWITCH, true);
    else ctx.switches.delete(CHAT_DELIVERY_FAILURE_SWITCH);
    return { failing: body.failing };
  });
}

/** The messaging area. */
export const messagingArea: EmulatorArea = {
  name: 'messaging',
  migrate: migrateMessaging,
  applySeed(ctx) {
    // Compiles the EMP registry now, so that a bad schema stops the start with the seed path.
    stateOf(ctx);
  },
  routes(app, ctx) {
    const { store, registry } = stateOf(ctx);
    registerMessagingRoutes(app, ctx, store, registry);
  },
  adminRoutes: registerAdminRoutes,
};
