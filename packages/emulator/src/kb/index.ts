/**
 * The knowledge area (spec "Knowledge bases"): tenant-level and users' private KBs, documents with background
 * ingestion, single-KB and agent retrieval. README "Knowledge bases".
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { registerKbRoutes } from './routes.js';
import { KnowledgeService } from './service.js';
import { migrateKb } from './store.js';
import { parseOr400 } from './validation.js';

// One service per emulator instance (several may run in one process, e.g. in tests).
const services = new WeakMap<EmulatorContext, KnowledgeService>();

/** The knowledge service of an emulator (the audit area reads private KBs through it). */
export function knowledgeOf(ctx: EmulatorContext): KnowledgeService {
  let service = services.get(ctx);
  if (!service) {
    service = new KnowledgeService(ctx.db, ctx);
    services.set(ctx, service);
  }
  return service;
}

function registerAdminRoutes(admin: FastifyInstance, ctx: EmulatorContext): void {
  const kb = knowledgeOf(ctx);
  admin.get('/_emulator/kb/ingestion', async () => kb.queue.state());
  admin.put('/_emulator/kb/ingestion', async (req) => {
    const body = parseOr400(z.strictObject({ paused: z.boolean() }), req.body);
    kb.queue.setPaused(body.paused);
    return kb.queue.state();
  });
  admin.post('/_emulator/kb/ingestion/drain', async () => {
    await kb.queue.drain();
    return kb.queue.state();
  });
}

/** The knowledge area. */
export const kbArea: EmulatorArea = {
  name: 'kb',
  migrate: migrateKb,
  applySeed(ctx) {
    knowledgeOf(ctx).applySeed();
  },
  async routes(app, ctx) {
    const kb = knowledgeOf(ctx);
    app.addHook('onClose', async () => kb.queue.close());
    await registerKbRoutes(app, ctx, kb);
    kb.resumeIngestion();
  },
  adminRoutes: registerAdminRoutes,
};

export { KnowledgeService } from './service.js';
