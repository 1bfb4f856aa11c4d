/**
 * Shared pieces of the auth tests: a two-tenant seed with OAuth clients and agents, an emulator started in-process
 * on port 0 (admin routes on), and helpers that talk to it over loopback.
 */
import type { Clock } from '../../src/core/clock.js';
import { startEmulator } from '../../src/index.js';
import { areas } from '../../src/core/areas.js';
import { authArea } from '../../src/auth/index.js';
import type { EmulatorContext } from '../../src/index.js';

export const ADMIN_TOKEN = 'admin-secret-for-tests';
export const AGENT_ID = '6f1c1b7e-0000-4000-8000-000000000001';
export const DELETED_AGENT_ID = '6f1c1b7e-0000-4000-8000-000000000002';
export const GLOBEX_AGENT_ID = '6f1c1b7e-0000-4000-8000-000000000003';
export const BOB_ACCOUNT = '0b0b0b0b-0000-4000-8000-000000000002';
export const ADA_ACCOUNT = '0a0a0a0a-0000-4000-8000-000000000001';
export const REDIRECT_URI = 'https://app.acme.test/callback';

/** API keys of the seed. */
export const KEYS = {
  acmeIntrospect: 'ek_acmeintro_0123456789abcdef',
  acmeOrgRw: 'ek_acmeorg_0123456789abcdef',
  globexIntrospect: 'ek_globexintro_0123456789abcdef',
} as const;

/** OAuth clients of the seed (id and secret). */
export const CLIENTS = {
  runtime: { id: 'rt-client', secret: 'rt-secret-value' },
  runtimeKbOnly: { id: 'rt-kb-only', secret: 'rt-kb-secret' },
  revoked: { id: 'rt-revoked', secret: 'revoked-secret' },
  h5: { id: 'h5-client', secret: 'h5-secret-value' },
  h5KbOnly: { id: 'h5-kb-only', secret: 'h5-kb-secret' },
  globexH5: { id: 'globex-h5', secret: 'globex-h5-secret' },
} as const;

/** The seed of the auth tests; `limits` default off so that only the tests about limits meet them. */
export function authTestSeed(limits: Record<string, number> = {}): Record<string, unknown> {
  return {
    tenants: [
      {
        id: 1001,
        name: 'Acme',
        api_keys: [
          { key: KEYS.acmeIntrospect, scopes: ['tenant.auth.introspect'] },
          { key: KEYS.acmeOrgRw, scopes: ['tenant.org.read', 'tenant.org.write'] },
        ],
        members: [
          { display_name: 'Ada Admin', email: 'ada@acme.test', phone: '+15550100', roles: ['tenant.admin'], account_id: ADA_ACCOUNT },
          { display_name: 'Bob Builder', email: 'bob@acme.test', phone: '+15550101', account_id: BOB_ACCOUNT },
        ],
        oauth_clients: [
          { client_id: CLIENTS.runtime.id, client_secret: CLIENTS.runtime.secret, kind: 'runtime', capabilities: ['org.read', 'kb.read', 'memory.read'] },
          { client_id: CLIENTS.runtimeKbOnly.id, client_secret: CLIENTS.runtimeKbOnly.secret, kind: 'runtime', capabilities: ['kb.read'] },
          { client_id: CLIENTS.revoked.id, client_secret: CLIENTS.revoked.secret, kind: 'runtime', capabilities: ['org.read'], revoked: true },
          { client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret, kind: 'h5_app', capabilities: ['kb.read', 'contacts.read'], redirect_uris: [REDIRECT_URI] },
          { client_id: CLIENTS.h5KbOnly.id, client_secret: CLIENTS.h5KbOnly.secret, kind: 'h5_app', capabilities: ['kb.read'], redirect_uris: [REDIRECT_URI] },
        ],
        agents: [
          { id: AGENT_ID, name: 'Helpdesk', visible_to: 'all' },
          { id: DELETED_AGENT_ID, name: 'Retired', status: 'deleted' },
        ],
      },
      {
        id: 2002,
        name: 'Globex',
        api_keys: [{ key: KEYS.globexIntrospect, scopes: ['tenant.auth.introspect'] }],
        members: [{ display_name: 'Gina Globex', email: 'gina@globex.test' }],
        oauth_clients: [
          { client_id: CLIENTS.globexH5.id, client_secret: CLIENTS.globexH5.secret, kind: 'h5_app', redirect_uris: ['https://app.globex.test/cb'] },
        ],
        agents: [{ id: GLOBEX_AGENT_ID, name: 'Globex helper' }],
      },
    ],
    limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0, ...limits },
  };
}

/** An answer: status, headers and the parsed body (JSON, else text). */
export interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A running emulator for the auth tests. */
export interface AuthEmulator {
  url: string;
  ctx: EmulatorContext;
  close(): Promise<void>;
  /** JSON request; `token` is sent as Bearer. */
  json(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Answer>;
  /** A form-urlencoded POST (what OAuth clients send). */
  form(path: string, fields: Record<string, string | string[]>, headers?: Record<string, string>): Promise<Answer>;
  /** An admin route call with the admin token. */
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text === '' ? undefined : text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body };
}

/** Starts the emulator on 127.0.0.1:0 with the admin routes on. */
export async function startAuthEmulator(opts: { seed?: Record<string, unknown>; clock?: Clock; adminToken?: string | null; dbPath?: string } = {}): Promise<AuthEmulator> {
  const adminToken = opts.adminToken === null ? undefined : (opts.adminToken ?? ADMIN_TOKEN);
  const running = await startEmulator({
    seed: opts.seed ?? authTestSeed(),
    port: 0,
    host: '127.0.0.1',
    areas: areas.includes(authArea) ? areas : [...areas, authArea],
    ...(adminToken ? { adminToken } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
  });
  const json: AuthEmulator['json'] = async (method, path, ro = {}) => {
    const headers: Record<string, string> = { ...ro.headers };
    if (ro.token !== undefined) headers.authorization = `Bearer ${ro.token}`;
    if (ro.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${running.url}${path}`, { method, headers, ...(ro.body !== undefined ? { body: JSON.stringify(ro.body) } : {}) });
    return answer(res);
  };
  return {
    url: running.url,
    ctx: running.ctx,
    close: () => running.close(),
    json,
    async form(path, fields, headers = {}) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const value of Array.isArray(v) ? v : [v]) params.append(k, value);
      const res = await fetch(`${running.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: params.toString(),
      });
      return answer(res);
    },
    admin: (method, path, body) => json(method, path, { token: ADMIN_TOKEN, ...(body !== undefined ? { body } : {}) }),
  };
}

/** The token endpoint's path. */
export const TOKEN = '/api/external/v1/oauth/token';

/** A session token from client_credentials (form body). */
export async function sessionToken(emu: AuthEmulator, client: { id: string; secret: string } = CLIENTS.runtime, extra: Record<string, string | string[]> = {}): Promise<string> {
  const res = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret, ...extra });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

/** An authorization code for a member (admin route). */
export async function authorizationCode(emu: AuthEmulator, opts: { client?: string; email?: string; nonce?: string; scope?: string; redirectUri?: string; tenantId?: number } = {}): Promise<string> {
  const res = await emu.admin('POST', '/_emulator/authorization-codes', {
    tenant_id: opts.tenantId ?? 1001,
    client_id: opts.client ?? CLIENTS.h5.id,
    email: opts.email ?? 'bob@acme.test',
    redirect_uri: opts.redirectUri ?? REDIRECT_URI,
    ...(opts.nonce !== undefined ? { nonce: opts.nonce } : {}),
    scope: opts.scope ?? 'openid email profile kb.read contacts.read',
  });
  if (res.status !== 200) throw new Error(`authorization code request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.code as string;
}

/** Application tokens from an authorization code (form body). */
export async function appTokens(emu: AuthEmulator, opts: Parameters<typeof authorizationCode>[1] & { secret?: string } = {}): Promise<Answer> {
  const code = await authorizationCode(emu, opts);
  const client = Object.values(CLIENTS).find((c) => c.id === (opts.client ?? CLIENTS.h5.id))!;
  return emu.form(TOKEN, { grant_type: 'authorization_code', code, client_id: client.id, client_secret: opts.secret ?? client.secret, redirect_uri: opts.redirectUri ?? REDIRECT_URI });
}
