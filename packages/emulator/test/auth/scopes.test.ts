/** The capability -> scope mapping of session tokens and the API scopes of application tokens (pure functions). */
import { describe, expect, it } from 'vitest';
import { appScopesOf, principalScopesOf, scopeOfCapability, tenantScopesOf } from '../../src/auth/scopes.js';

describe('capability -> scope mapping', () => {
  it('maps each capability to its tenant.* scope', () => {
    expect(scopeOfCapability('org.read')).toBe('tenant.org.read');
    expect(scopeOfCapability('kb.read')).toBe('tenant.kb.read');
    expect(scopeOfCapability('kb.write')).toBe('tenant.kb.write');
    expect(scopeOfCapability('memory.read')).toBe('tenant.memory.read');
    expect(scopeOfCapability('memory.write')).toBe('tenant.memory.write');
    expect(scopeOfCapability('tenant.notification.write')).toBe('tenant.notification.write');
  });

  it('the token scope lists each tenant scope once, in capability order', () => {
    expect(tenantScopesOf(['org.read', 'kb.read', 'tenant.kb.read', 'memory.read'])).toEqual(['tenant.org.read', 'tenant.kb.read', 'tenant.memory.read']);
  });

  it('a principal satisfies the tenant.* names and the raw capability names', () => {
    expect([...principalScopesOf(['kb.read', 'svc.kb.search'])].sort()).toEqual(['kb.read', 'svc.kb.search', 'tenant.kb.read', 'tenant.svc.kb.search']);
    expect(principalScopesOf([]).size).toBe(0);
  });

  it('an application token carries only kb.read and contacts.read for the API', () => {
    expect([...appScopesOf('openid email profile kb.read contacts.read')]).toEqual(['kb.read', 'contacts.read']);
    expect([...appScopesOf('openid tenant.org.write')]).toEqual([]);
  });
});
