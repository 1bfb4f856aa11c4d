/** The OpenID discovery document and the public key set. */
import { GRANT_TYPES } from './token-endpoint.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import type { PublicJwk } from './keys.js';
import type { AuthState } from './state.js';

/** The path of the token endpoint under the base URL. */
export const TOKEN_PATH = '/api/external/v1/oauth/token';
/** The path of the key set under the base URL. */
export const JWKS_PATH = '/.well-known/jwks.json';
/** The path of the discovery document under the base URL. */
export const DISCOVERY_PATH = '/.well-known/openid-configuration';
/** The ctx.switches entry that makes the key set answer 503 keys_unavailable. */
export const JWKS_UNAVAILABLE_SWITCH = 'jwks_unavailable';

/** Claims of the ID token, as listed. */
export const CLAIMS_SUPPORTED = ['sub', 'email', 'email_verified', 'name', 'phone_number', 'tenant', 'membership', 'svc_context', 'nonce'] as const;

/** The discovery document; every field the spec requires, with the issuer equal to the `iss` of issued ID tokens. */
export function discoveryDocument(state: AuthState): Record<string, unknown> {
  const issuer = state.issuer();
  return {
    issuer,
    // The platform's own client launches the H5 application with this template; backends never call it.
    authorization_endpoint: `${issuer}/h5/launch?client_id={client_id}&redirect_uri={redirect_uri}&scope={scope}&state={state}&nonce={nonce}`,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    response_types_supported: ['code'],
    grant_types_supported: [...GRANT_TYPES],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    scopes_supported: [...SUPPORTED_SCOPES],
    claims_supported: [...CLAIMS_SUPPORTED],
  };
}

/** The key set: the active and the retiring public keys. */
export function keySet(state: AuthState): { keys: PublicJwk[] } {
  return { keys: state.keys.all().map((k) => k.jwk) };
}
