/**
 * The memory area (spec "Memory"): recall, events, list and delete of a digital employee's memories in four scopes,
 * with a fault switch per scope backend. README "Memory".
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { stableUuid } from '../kb/ids.js';
import { MEMORY_SCOPES } from '../kb/seed.js';
import { parseOr400 } from '../kb/validation.js';
import { registerMemoryRoutes, scopeFailureSwitch } from './routes.js';
import { migrateMemory, MemoryStore } from './store.js';

const stores = new WeakMap<EmulatorContext, MemoryStore>();

function storeOf(ctx: EmulatorContext): MemoryStore {
  let store = stores.get(ctx);
  if (!store) {
    store = new MemoryStore(ctx.db);
    stores.set(ctx, store);
  }
  return store;
}

function registerAdminRoutes(admin: FastifyInstance, ctx: EmulatorContext): void {
  const state = (): Record<string, boolean> => Object.fromEntries(MEMORY_SCOPES.map((s) => [s, Boolean(ctx.switches.get(scopeFailureSwitch(s)))]));
  admin.get('/_emulator/memory/scope-failures', async () => ({ failing: state() }));
  admin.put<{ Params: { scope: string } }>('/_emulator/memory/scope-failures/:scope', async (req) => {
    const { scope } = parseOr400(z.strictObject({ scope: z.enum(MEMORY_SCOPES) }), req.params, 'path');
    const body = parseOr400(z.strictObject({ failing: z.boolean() }), req.body);
    if (body.failing) ctx.switches.set(scopeFailureSwitch(scope), true);
    else ctx.switches.delete(scopeFailureSwitch(scope));
    return { failing: state() };
  });
}

/** The memory area. */
export const memoryArea: EmulatorArea = {
  name: 'memory',
  migrate: migrateMemory,
  applySeed(ctx) {
    const store = storeOf(ctx);
    const now = ctx.clock.now();
    for (const tenant of ctx.seed.tenants) {
      tenant.memories.forEach((m, i) => {
        store.insert({
          id: m.id ?? stableUuid(`memory:${tenant.id}:${i}:${m.content}`),
          tenant_id: tenant.id,
          scope: m.scope,
          user_id: m.user_id,
          agent_id: m.agent_id,
          session_id: m.session_id,
          group_id: m.group_id,
          content: m.content,
          created_at: now,
        });
      });
    }
  },
  routes(app, ctx) {
    registerMemoryRoutes(app, ctx, storeOf(ctx));
  },
  adminRoutes: registerAdminRoutes,
};
