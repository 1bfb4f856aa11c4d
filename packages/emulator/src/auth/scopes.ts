/**
 * Capabilities (what an OAuth client and its session tokens may do) and the scope names the routes check.
 *
 * A session token carries, for each capability `c` it holds, the API-key style scope `tenant.c`
 * (org.read -> tenant.org.read, kb.read -> tenant.kb.read, kb.write -> tenant.kb.write,
 * memory.read -> tenant.memory.read, memory.write -> tenant.memory.write, notification.write ->
 * tenant.notification.write, ...) and the capability name itself (so that a route may accept e.g. `svc.kb.search`
 * as the spec allows for knowledge retrieval). A capability already spelled `tenant.x` stays `tenant.x`.
 * Which scope a route needs is the route's business (RouteAuth): organisation writes, for one, never accept a
 * session token whatever it carries.
 */

/** The scopes an application JWT may carry for the API (besides the OpenID ones). */
export const APP_API_SCOPES = ['kb.read', 'contacts.read'] as const;

/** The scope values the discovery document lists. */
export const SUPPORTED_SCOPES = ['openid', 'email', 'profile', ...APP_API_SCOPES] as const;

/** The `tenant.*` scope a capability grants. */
export function scopeOfCapability(capability: string): string {
  return capability.startsWith('tenant.') ? capability : `tenant.${capability}`;
}

/** The `tenant.*` scopes of a list of capabilities, in order, without duplicates (the token response's `scope`). */
export function tenantScopesOf(capabilities: readonly string[]): string[] {
  return [...new Set(capabilities.map(scopeOfCapability))];
}

/** Every scope name a session token with these capabilities satisfies (tenant.* names and the raw capabilities). */
export function principalScopesOf(capabilities: readonly string[]): Set<string> {
  return new Set([...tenantScopesOf(capabilities), ...capabilities]);
}

/** The API scopes of an application token's space-separated scope string. */
export function appScopesOf(scope: string): Set<string> {
  const apiScopes: readonly string[] = APP_API_SCOPES;
  return new Set(scope.split(' ').filter((s) => apiScopes.includes(s)));
}
