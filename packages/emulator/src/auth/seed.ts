/**
 * The auth area's part of the emulator seed: OAuth clients per tenant, and the token endpoint's lifetimes.
 * README "Authentication" documents every key.
 */
import { z } from 'zod';

/** A capability name a client may hold (`org.read`, `kb.read`, `memory.write`, `svc.kb.search`, ...). */
const capabilityName = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/, 'a capability is a dotted lower-case name such as org.read');

/** An OAuth client registered with a tenant. */
export const seedOAuthClientSchema = z.strictObject({
  client_id: z.string().min(1).regex(/^[A-Za-z0-9._~-]+$/, 'client_id: letters, digits and . _ ~ - only'),
  /** Held hashed by the emulator; compared in constant time. */
  client_secret: z.string().min(1),
  /**
   * `runtime` clients use client_credentials / runtime_access; `h5_app` clients authorization_code / refresh_token.
   * Absent: `h5_app` when redirect_uris are given, else `runtime`.
   */
  kind: z.enum(['runtime', 'h5_app']).optional(),
  /**
   * What session tokens of this client may do (runtime), or which API scopes (`kb.read`, `contacts.read`) its
   * application tokens may carry (h5_app). Absent for an h5_app: both API scopes.
   */
  capabilities: z.array(capabilityName).optional(),
  /** Registered redirect URIs (h5_app); the token exchange compares them exactly. */
  redirect_uris: z.array(z.url()).default([]),
  /** A revoked client fails client authentication with the same 401 as an unknown one. */
  revoked: z.boolean().default(false),
  /** The deprecated `bound_runtime_environment_id` of its session tokens; default: the client's 1-based position in the tenant. */
  runtime_environment_id: z.number().int().positive().optional(),
});

/** The auth area's fields of a seed tenant. */
export const authTenantSeedShape = {
  oauth_clients: z.array(seedOAuthClientSchema).default([]),
};

/** Lifetimes (seconds) of what the auth area issues. */
export const authSettingsSchema = z.strictObject({
  /** Application access tokens (JWT) from authorization_code / refresh_token. */
  access_token_ttl_seconds: z.number().int().positive().default(3600),
  /** ID tokens. */
  id_token_ttl_seconds: z.number().int().positive().default(3600),
  /** Refresh tokens (single use; each refresh issues a new one). */
  refresh_token_ttl_seconds: z.number().int().positive().default(30 * 24 * 3600),
  /** Authorization codes made by POST /_emulator/authorization-codes (single use). */
  authorization_code_ttl_seconds: z.number().int().positive().default(600),
  /** Upper bound of `ttl_seconds` at the token endpoint for session tokens. */
  max_session_ttl_seconds: z.number().int().positive().default(86_400),
  /** User login tokens made by POST /_emulator/login-tokens when no ttl_seconds is given. */
  login_token_ttl_seconds: z.number().int().positive().default(3600),
  /** Upper bound of an introspection result's cache_ttl_seconds (never beyond the token's remaining life). */
  introspection_cache_ttl_seconds: z.number().int().min(0).default(300),
});

/** Default lifetimes, as the schema fills them. */
export const defaultAuthSettings: z.infer<typeof authSettingsSchema> = authSettingsSchema.parse({});

/** The auth area's top-level seed fields. */
export const authSeedShape = {
  auth: authSettingsSchema.default(defaultAuthSettings),
};

/** One seeded OAuth client. */
export type SeedOAuthClient = z.infer<typeof seedOAuthClientSchema>;
/** The auth settings of a seed. */
export type AuthSettings = z.infer<typeof authSettingsSchema>;
