/** What the auth area's routes, admin routes and credential resolvers share for one emulator instance. */
import type { EmulatorContext } from '../core/types.js';
import { ClientRegistry } from './clients.js';
import { SigningKeys } from './keys.js';
import { defaultAuthSettings, type AuthSettings } from './seed.js';
import { AuthStore } from './store.js';

/** The auth area's services for one emulator. */
export interface AuthState {
  ctx: EmulatorContext;
  store: AuthStore;
  keys: SigningKeys;
  clients: ClientRegistry;
  settings: AuthSettings;
  /** Counts one token request of a client_id against seed limits.per_client_id: 0, or the seconds to wait. */
  takeClientRequest(clientId: string): number;
  /** The issuer: the emulator's base URL without a trailing slash (discovery `issuer`, `iss` of every JWT). */
  issuer(): string;
}

/** Builds the state over the context (the tables must exist). */
export function createAuthState(ctx: EmulatorContext): AuthState {
  const store = new AuthStore(ctx.db);
  return {
    ctx,
    store,
    keys: new SigningKeys(store, ctx.clock),
    clients: new ClientRegistry(ctx.seed),
    settings: (ctx.seed as { auth?: AuthSettings }).auth ?? defaultAuthSettings,
    takeClientRequest: (clientId) => ctx.rateLimiter.take([{ key: `oauth-client:${clientId}`, ratePerSecond: ctx.seed.limits.per_client_id }]),
    issuer: () => ctx.baseUrl().replace(/\/+$/, ''),
  };
}
