/**
 * The auth area: discovery, the key set, the token endpoint's four grants, introspection, the st_ and application
 * JWT credential resolvers, and its admin routes. README "Authentication".
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { badRequest, envelope } from '../core/errors.js';
import { registerAuthAdminRoutes } from './admin.js';
import { appTokenResolver, sessionTokenResolver } from './credentials.js';
import { DISCOVERY_PATH, discoveryDocument, JWKS_PATH, JWKS_UNAVAILABLE_SWITCH, keySet, TOKEN_PATH } from './discovery.js';
import { introspect } from './login-tokens.js';
import { createAuthState, type AuthState } from './state.js';
import { migrateAuth } from './store.js';
import { handleTokenRequest } from './token-endpoint.js';

/** The path of the introspection endpoint. */
export const INTROSPECT_PATH = '/api/external/v1/auth/introspect';

/** One state per emulator instance (several emulators may run in one process, e.g. in tests). */
const states = new WeakMap<EmulatorContext, AuthState>();

function stateOf(ctx: EmulatorContext): AuthState {
  let state = states.get(ctx);
  if (!state) {
    state = createAuthState(ctx);
    states.set(ctx, state);
  }
  return state;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

async function registerRoutes(app: FastifyInstance, state: AuthState): Promise<void> {
  const { ctx } = state;
  // Form bodies only where OAuth uses them; scoped so that other areas keep their own parsers.
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  app.get(DISCOVERY_PATH, async () => discoveryDocument(state));

  app.get(JWKS_PATH, async (_req, reply) => {
    if (ctx.switches.get(JWKS_UNAVAILABLE_SWITCH)) {
      return reply.code(503).header('content-type', 'text/plain; charset=utf-8').send(JSON.stringify({ error: 'keys_unavailable' }));
    }
    await state.keys.ensure();
    return reply.header('cache-control', 'public, max-age=60').send(keySet(state));
  });

  app.post(TOKEN_PATH, { config: { errorShape: 'oauth' } }, async (req, reply) => {
    const result = await handleTokenRequest(state, req.body, req.headers.authorization);
    return reply.code(result.status).headers(NO_STORE).send(result.body);
  });

  app.post(
    INTROSPECT_PATH,
    { config: { errorShape: 'envelope' }, onRequest: ctx.authorize({ apiKey: 'tenant.auth.introspect', shape: 'envelope' }) },
    async (req) => {
      const body = req.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('token: required');
      const { token, token_type_hint: _hint, ...rest } = body as Record<string, unknown>;
      const unknown = Object.keys(rest);
      if (unknown.length > 0) throw badRequest(`unknown property: ${unknown.join(', ')}`);
      if (token === undefined) throw badRequest('token: required');
      if (typeof token !== 'string' || token === '') throw badRequest('token: must be a non-empty string');
      return envelope(req, introspect(state, req.principal!.tenantId, token));
    },
  );
}

/** The auth area. */
export const authArea: EmulatorArea = {
  name: 'auth',
  migrate: migrateAuth,
  applySeed(ctx) {
    // Builds the client registry now, so that a duplicate client_id fails at start with the seed path.
    stateOf(ctx);
  },
  async routes(app, ctx) {
    const state = stateOf(ctx);
    ctx.credentials.add(sessionTokenResolver(state));
    ctx.credentials.add(appTokenResolver(state));
    await app.register(async (scope) => registerRoutes(scope, state));
  },
  adminRoutes(admin, ctx) {
    registerAuthAdminRoutes(admin, stateOf(ctx));
  },
};
