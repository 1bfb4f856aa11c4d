/**
 * The OAuth clients of the seed, with their secrets held as SHA-256 hashes. Authentication gives one answer for an
 * unknown client, a wrong secret and a revoked client, and does the same hash comparison in all three cases.
 */
import type { Seed } from '../core/seed.js';
import { APP_API_SCOPES } from './scopes.js';
import { hashSecret, secretMatches } from './store.js';

/** A registered client. */
export interface OAuthClient {
  clientId: string;
  tenantId: number;
  kind: 'runtime' | 'h5_app';
  capabilities: string[];
  redirectUris: string[];
  revoked: boolean;
  runtimeEnvironmentId: number;
  secretHash: Buffer;
}

/** Compared against when the client is unknown, so that an unknown client costs the same as a wrong secret. */
const DUMMY_HASH = hashSecret('no such client');

/** All clients of all tenants, by client_id. */
export class ClientRegistry {
  private readonly byId = new Map<string, OAuthClient>();

  constructor(seed: Seed) {
    for (const tenant of seed.tenants) {
      tenant.oauth_clients.forEach((c, index) => {
        if (this.byId.has(c.client_id)) {
          throw new Error(`seed: tenants[id=${tenant.id}].oauth_clients[${index}].client_id: "${c.client_id}" is already used by another client`);
        }
        const kind = c.kind ?? (c.redirect_uris.length > 0 ? 'h5_app' : 'runtime');
        this.byId.set(c.client_id, {
          clientId: c.client_id,
          tenantId: tenant.id,
          kind,
          capabilities: c.capabilities ?? (kind === 'h5_app' ? [...APP_API_SCOPES] : []),
          redirectUris: c.redirect_uris,
          revoked: c.revoked,
          runtimeEnvironmentId: c.runtime_environment_id ?? index + 1,
          secretHash: hashSecret(c.client_secret),
        });
      });
    }
  }

  /** The client, whatever its state (for the admin routes). */
  get(clientId: string): OAuthClient | undefined {
    return this.byId.get(clientId);
  }

  /** The client when the id and secret are right and it is not revoked; undefined otherwise, whatever the reason. */
  authenticate(clientId: string, clientSecret: string): OAuthClient | undefined {
    const client = this.byId.get(clientId);
    const secretOk = secretMatches(clientSecret, client?.secretHash ?? DUMMY_HASH);
    if (!client || !secretOk || client.revoked) return undefined;
    return client;
  }
}
