/**
 * Shared seed and credential helpers of the knowledge / memory / messaging / audit tests.
 */
import type { TestEmulator } from '../helpers/emulator.js';

/** API base path. */
export const API = '/api/external/v1';
/** The admin token of the test emulators. */
export const ADMIN = 'admin-secret-token';

/** Tenant ids. */
export const ACME = 1001;
export const GLOBEX = 2002;

/** Fixed ids of the seed. */
export const IDS = {
  bob: '0b0b0b0b-0000-4000-8000-000000000001',
  carol: '0c0c0c0c-0000-4000-8000-000000000002',
  dave: '0d0d0d0d-0000-4000-8000-000000000003',
  erin: '0e0e0e0e-0000-4000-8000-000000000004',
  globexGreg: '09090909-0000-4000-8000-000000000005',
  helper: 'a0000000-0000-4000-8000-000000000001',
  secretAgent: 'a0000000-0000-4000-8000-000000000002',
  goneAgent: 'a0000000-0000-4000-8000-000000000003',
  emptyAgent: 'a0000000-0000-4000-8000-000000000004',
  globexAgent: 'a0000000-0000-4000-8000-000000000005',
  handbook: 'b0000000-0000-4000-8000-000000000001',
  policies: 'b0000000-0000-4000-8000-000000000002',
  bobNotes: 'b0000000-0000-4000-8000-000000000003',
  workspaceKb: 'b0000000-0000-4000-8000-000000000004',
  carolNotes: 'b0000000-0000-4000-8000-000000000005',
  globexKb: 'b0000000-0000-4000-8000-000000000006',
  refundDoc: 'c0000000-0000-4000-8000-000000000001',
  bobDoc: 'c0000000-0000-4000-8000-000000000002',
  globexDoc: 'c0000000-0000-4000-8000-000000000003',
} as const;

/** ek_ keys of tenant Acme, one per scope, plus one with every scope; one of Globex. */
export const KEYS = {
  kbRead: 'ek_kbread_0123456789',
  kbWrite: 'ek_kbwrite_0123456789',
  memRead: 'ek_memread_0123456789',
  memWrite: 'ek_memwrite_0123456789',
  notify: 'ek_notify_0123456789',
  chat: 'ek_chat_0123456789',
  auditList: 'ek_auditlist_0123456789',
  auditRead: 'ek_auditread_0123456789',
  none: 'ek_none_0123456789',
  all: 'ek_all_0123456789',
  orgWrite: 'ek_orgwrite_0123456789',
  introspect: 'ek_introspect_0123456789',
  globex: 'ek_globex_0123456789',
} as const;

/** Every scope of these sections. */
export const ALL_SCOPES = [
  'tenant.kb.read',
  'tenant.kb.write',
  'tenant.memory.read',
  'tenant.memory.write',
  'tenant.notification.write',
  'tenant.chat.message.write',
  'tenant.kb.list_user_private',
  'tenant.kb.read_user_private',
];

/** The runtime OAuth client of Acme and its capabilities (every capability of these sections). */
export const RUNTIME_CLIENT = { id: 'acme-runtime', secret: 'runtime-secret-1' };
export const RUNTIME_CAPABILITIES = ALL_SCOPES.map((s) => s.replace(/^tenant\./, ''));
/** The H5 application client of Acme. */
export const H5_CLIENT = { id: 'acme-h5', secret: 'h5-secret-1', redirect: 'https://app.acme.test/callback' };

/** A small corpus with known relevant passages. */
export const HANDBOOK_DOCS = [
  {
    id: IDS.refundDoc,
    title: 'Refund policy',
    mime_type: 'text/markdown',
    content: [
      '# Refunds',
      'Customers can request a refund within 30 days of purchase. Refunds are paid back to the original payment card.',
      '# Damaged goods',
      'If an item arrives damaged, send a photo to support and we ship a replacement at no cost.',
    ].join('\n\n'),
  },
  {
    title: 'Travel expenses',
    mime_type: 'text/plain',
    content: [
      'Employees book flights through the travel portal. Economy class is the default for flights under six hours.',
      'Hotel costs are reimbursed up to 150 euros per night in most cities. Keep every receipt.',
      'Meals during business travel are covered by a daily allowance.',
    ].join('\n\n'),
  },
  {
    title: 'Security',
    mime_type: 'text/plain',
    content: [
      'Laptops must use full disk encryption and lock after five minutes.',
      'Report a lost laptop or phone to the security team within one hour.',
      'Passwords are never shared, not even with the IT team.',
    ].join('\n\n'),
  },
];

/** The seed of the knowledge / memory / messaging / audit tests. */
export function kbTestSeed(): Record<string, unknown> {
  return {
    tenants: [
      {
        id: ACME,
        name: 'Acme',
        api_keys: [
          { key: KEYS.kbRead, scopes: ['tenant.kb.read'] },
          { key: KEYS.kbWrite, scopes: ['tenant.kb.write'] },
          { key: KEYS.memRead, scopes: ['tenant.memory.read'] },
          { key: KEYS.memWrite, scopes: ['tenant.memory.write'] },
          { key: KEYS.notify, scopes: ['tenant.notification.write'] },
          { key: KEYS.chat, scopes: ['tenant.chat.message.write'] },
          { key: KEYS.auditList, scopes: ['tenant.kb.list_user_private'] },
          { key: KEYS.auditRead, scopes: ['tenant.kb.read_user_private'] },
          { key: KEYS.none, scopes: ['tenant.org.read'] },
          { key: KEYS.all, scopes: ALL_SCOPES },
          { key: KEYS.orgWrite, scopes: ['tenant.org.read', 'tenant.org.write'] },
          { key: KEYS.introspect, scopes: ['tenant.auth.introspect'] },
        ],
        members: [
          { display_name: 'Ada Admin', email: 'ada@acme.test', roles: ['tenant.admin'] },
          { display_name: 'Bob', email: 'bob@acme.test', account_id: IDS.bob },
          { display_name: 'Carol', email: 'carol@acme.test', account_id: IDS.carol },
          { display_name: 'Dave', email: 'dave@acme.test', account_id: IDS.dave },
          { display_name: 'Erin', email: 'erin@acme.test', account_id: IDS.erin },
        ],
        oauth_clients: [
          { client_id: RUNTIME_CLIENT.id, client_secret: RUNTIME_CLIENT.secret, kind: 'runtime', capabilities: RUNTIME_CAPABILITIES },
          { client_id: H5_CLIENT.id, client_secret: H5_CLIENT.secret, kind: 'h5_app', redirect_uris: [H5_CLIENT.redirect] },
        ],
        agents: [
          { id: IDS.helper, name: 'Helper', knowledge_base_ids: [IDS.handbook, IDS.policies] },
          { id: IDS.secretAgent, name: 'Secret', visible_to: ['carol@acme.test'], knowledge_base_ids: [IDS.policies] },
          { id: IDS.goneAgent, name: 'Gone', status: 'deleted' },
          { id: IDS.emptyAgent, name: 'Empty' },
        ],
        knowledge_bases: [
          { id: IDS.handbook, name: 'Handbook', description: 'Company handbook', documents: HANDBOOK_DOCS },
          {
            id: IDS.policies,
            name: 'Policies',
            documents: [{ title: 'Leave', content: 'Parental leave lasts sixteen weeks at full pay.\n\nSick leave needs a note after three days.' }],
          },
          {
            id: IDS.bobNotes,
            name: 'Bob notes',
            visibility: 'private',
            owner_email: 'bob@acme.test',
            documents: [{ id: IDS.bobDoc, title: 'Diary', content: 'Bob private diary: the launch date moved to March.' }],
          },
          { id: IDS.carolNotes, name: 'Carol notes', visibility: 'private', owner_email: 'carol@acme.test' },
          { id: IDS.workspaceKb, name: 'Team space', visibility: 'workspace' },
        ],
        memories: [
          { id: 'mem-seed-tea', scope: 'user_long_term', user_id: IDS.bob, agent_id: IDS.helper, content: 'Bob prefers green tea over coffee.' },
          { id: 'mem-seed-lang', scope: 'agent_private', user_id: IDS.bob, agent_id: IDS.helper, content: 'The helper answers in English unless asked otherwise.' },
        ],
      },
      {
        id: GLOBEX,
        name: 'Globex',
        api_keys: [{ key: KEYS.globex, scopes: ALL_SCOPES }],
        members: [{ display_name: 'Greg', email: 'greg@globex.test', account_id: IDS.globexGreg }],
        agents: [{ id: IDS.globexAgent, name: 'Globex helper', knowledge_base_ids: [IDS.globexKb] }],
        knowledge_bases: [
          { id: IDS.globexKb, name: 'Globex secrets', documents: [{ id: IDS.globexDoc, title: 'Plans', content: 'Globex refund policy is secret.' }] },
        ],
      },
    ],
    limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 },
  };
}

/** Issues a session token (st_) of the Acme runtime client. */
export async function sessionToken(
  emu: TestEmulator,
  grant: 'client_credentials' | 'runtime_access',
  opts: { capabilities?: string[]; agentId?: string; accountId?: string; ttlSeconds?: number } = {},
): Promise<string> {
  const body: Record<string, unknown> = { grant_type: grant, client_id: RUNTIME_CLIENT.id, client_secret: RUNTIME_CLIENT.secret };
  if (grant === 'runtime_access') body.tenant_id = ACME;
  if (opts.capabilities) body.capability_bindings = opts.capabilities;
  if (opts.agentId) body.agent_id = opts.agentId;
  if (opts.accountId) body.account_id = opts.accountId;
  if (opts.ttlSeconds) body.ttl_seconds = opts.ttlSeconds;
  const res = await emu.request('POST', `${API}/oauth/token`, { body });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

/** Issues an application access token (JWT) for a member of Acme, through an authorization code. */
export async function appToken(emu: TestEmulator, email: string, scope = 'openid kb.read'): Promise<string> {
  const code = await emu.request('POST', '/_emulator/authorization-codes', { token: ADMIN, body: { tenant_id: ACME, client_id: H5_CLIENT.id, email, scope } });
  if (code.status !== 200) throw new Error(`authorization code: ${code.status} ${JSON.stringify(code.body)}`);
  const res = await emu.request('POST', `${API}/oauth/token`, {
    body: { grant_type: 'authorization_code', code: code.body.code, client_id: H5_CLIENT.id, client_secret: H5_CLIENT.secret, redirect_uri: H5_CLIENT.redirect },
  });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

/** Waits until background ingestion has finished (admin route). */
export async function drainIngestion(emu: TestEmulator): Promise<void> {
  const res = await emu.request('POST', '/_emulator/kb/ingestion/drain', { token: ADMIN });
  if (res.status !== 200) throw new Error(`drain answered ${res.status}`);
}

/** Uploads raw bytes (Form B). */
export async function uploadRaw(
  emu: TestEmulator,
  token: string,
  kbId: string,
  bytes: Uint8Array | string,
  query: Record<string, string>,
  contentType = 'application/octet-stream',
): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const qs = new URLSearchParams(query).toString();
  const res = await fetch(`${emu.url}${API}/knowledge-bases/${kbId}/documents${qs ? `?${qs}` : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: typeof bytes === 'string' ? bytes : Buffer.from(bytes),
  });
  return { status: res.status, body: await res.json() };
}

/** Uploads a file as multipart/form-data (Form A). */
export async function uploadMultipart(
  emu: TestEmulator,
  token: string,
  kbId: string,
  file: { bytes: Uint8Array | string; name: string; type: string },
  fields: Record<string, string> = {},
): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const blobPart = typeof file.bytes === 'string' ? file.bytes : Buffer.from(file.bytes);
  form.append('file', new Blob([blobPart], { type: file.type }), file.name);
  const res = await fetch(`${emu.url}${API}/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: await res.json() };
}
