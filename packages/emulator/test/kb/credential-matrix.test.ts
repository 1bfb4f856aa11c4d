/**
 * The credential and scope matrix over every endpoint of the knowledge, memory, notification, chat and audit
 * sections (spec "Authentication"): ek_ keys with and without each scope, st_ tokens from each grant (with and without
 * the capability), application JWTs with and without kb.read, missing, unknown and expired credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, appToken, IDS, kbTestSeed, KEYS, RUNTIME_CAPABILITIES, sessionToken } from './fixtures.js';

interface Endpoint {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  /** The scope an ek_ key needs (undefined: no ek_ key is accepted). */
  apiKey?: string;
  /** The capability a st_ token needs (undefined: no session token is accepted). */
  capability?: string;
  /** Only runtime_access session tokens. */
  runtimeOnly?: boolean;
  /** An application JWT with kb.read is accepted. */
  app?: boolean;
}

const notification = { user_id: IDS.bob, agent_id: IDS.helper, title: 'T', description: 'D' };
const chat = { target: { type: 'agent_conversation', user_id: IDS.bob, agent_id: IDS.helper }, message: { blocks: [{ type: 'text', text: 'hi' }] } };
const memoryKeys = 'user_id=u1&agent_id=a1&session_id=s1';

const ENDPOINTS: Endpoint[] = [
  { name: 'KB list', method: 'GET', path: `${API}/knowledge-bases`, apiKey: 'tenant.kb.read', capability: 'kb.read', app: true },
  { name: 'KB create', method: 'POST', path: `${API}/knowledge-bases`, body: { name: 'M' }, apiKey: 'tenant.kb.write', capability: 'kb.write' },
  { name: 'KB detail', method: 'GET', path: `${API}/knowledge-bases/${IDS.handbook}`, apiKey: 'tenant.kb.read', capability: 'kb.read', app: true },
  { name: 'document list', method: 'GET', path: `${API}/knowledge-bases/${IDS.handbook}/documents`, apiKey: 'tenant.kb.read', capability: 'kb.read', app: true },
  {
    name: 'document upload',
    method: 'POST',
    path: `${API}/knowledge-bases/${IDS.handbook}/documents?title=m.txt&mime_type=text/plain`,
    body: 'matrix upload',
    apiKey: 'tenant.kb.write',
    capability: 'kb.write',
  },
  { name: 'document detail', method: 'GET', path: `${API}/knowledge-bases/${IDS.handbook}/documents/${IDS.refundDoc}`, apiKey: 'tenant.kb.read', capability: 'kb.read', app: true },
  { name: 'single-KB retrieve', method: 'POST', path: `${API}/knowledge-bases/${IDS.handbook}/retrieve`, body: { query: 'refund' }, apiKey: 'tenant.kb.read', capability: 'kb.read', app: true },
  { name: 'agent retrieve', method: 'POST', path: `${API}/knowledge/retrieve`, body: { agent_id: IDS.helper, query: 'refund' }, capability: 'kb.read', runtimeOnly: true },
  { name: 'memory recall', method: 'POST', path: `${API}/memories/recall`, body: { user_id: 'u1', agent_id: 'a1', session_id: 's1', query: 'q' }, apiKey: 'tenant.memory.read', capability: 'memory.read' },
  { name: 'memory events', method: 'POST', path: `${API}/memories/events`, body: { user_id: 'u1', agent_id: 'a1', session_id: 's1', content: 'c' }, apiKey: 'tenant.memory.write', capability: 'memory.write' },
  { name: 'memory list', method: 'GET', path: `${API}/memories?${memoryKeys}`, apiKey: 'tenant.memory.read', capability: 'memory.read' },
  { name: 'memory delete', method: 'DELETE', path: `${API}/memories/some-id?${memoryKeys}`, apiKey: 'tenant.memory.write', capability: 'memory.write' },
  { name: 'notification', method: 'POST', path: `${API}/notifications/agent-conversation`, body: notification, apiKey: 'tenant.notification.write' },
  { name: 'chat message', method: 'POST', path: `${API}/chat/messages`, body: chat, apiKey: 'tenant.chat.message.write' },
  { name: 'audit: user KBs', method: 'GET', path: `${API}/users/${IDS.bob}/knowledge-bases`, apiKey: 'tenant.kb.list_user_private', capability: 'kb.list_user_private' },
  { name: 'audit: user KB', method: 'GET', path: `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}`, apiKey: 'tenant.kb.list_user_private', capability: 'kb.list_user_private' },
  {
    name: 'audit: user KB documents',
    method: 'GET',
    path: `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}/documents`,
    apiKey: 'tenant.kb.read_user_private',
    capability: 'kb.read_user_private',
  },
];

/** The single-scope keys of the seed and the scope each holds (`none` holds only tenant.org.read). */
const SINGLE_SCOPE_KEYS: [keyof typeof KEYS, string][] = [
  ['kbRead', 'tenant.kb.read'],
  ['kbWrite', 'tenant.kb.write'],
  ['memRead', 'tenant.memory.read'],
  ['memWrite', 'tenant.memory.write'],
  ['notify', 'tenant.notification.write'],
  ['chat', 'tenant.chat.message.write'],
  ['auditList', 'tenant.kb.list_user_private'],
  ['auditRead', 'tenant.kb.read_user_private'],
  ['none', 'tenant.org.read'],
];

let emu: TestEmulator;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
  tokens.clientCredentials = await sessionToken(emu, 'client_credentials');
  tokens.runtimeAccess = await sessionToken(emu, 'runtime_access');
  tokens.jwtKbRead = await appToken(emu, 'bob@acme.test', 'openid kb.read');
  tokens.jwtNoKb = await appToken(emu, 'bob@acme.test', 'openid');
  for (const e of ENDPOINTS) {
    if (!e.capability) continue;
    const without = RUNTIME_CAPABILITIES.filter((c) => c !== e.capability);
    tokens[`cc-without-${e.name}`] = await sessionToken(emu, 'client_credentials', { capabilities: without });
    tokens[`ra-without-${e.name}`] = await sessionToken(emu, 'runtime_access', { capabilities: without });
  }
});
afterAll(async () => emu?.close());

async function call(e: Endpoint, token: string | undefined): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return emu.request(e.method, e.path, { ...(token !== undefined ? { token } : {}), ...(e.body !== undefined ? { body: e.body } : {}) });
}

function expectRefused(res: { status: number; body: { code: number; error: { code: string } } }, status: 401 | 403, code?: string): void {
  expect(res.status).toBe(status);
  expect(res.body.code).toBe(status * 10);
  if (code) expect(res.body.error.code).toBe(code);
}

describe.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s', (_name, e) => {
  it('answers 401 without a credential', async () => {
    expectRefused(await call(e, undefined), 401);
  });

  it('answers 401 invalid_api_key for an unknown ek_ key', async () => {
    expectRefused(await call(e, 'ek_unknown_0000000000'), 401, 'invalid_api_key');
  });

  it('answers 401 invalid_session_token for an unknown st_ token', async () => {
    expectRefused(await call(e, 'st_unknown_000000000000000000000000'), 401, 'invalid_session_token');
  });

  it.each(SINGLE_SCOPE_KEYS)('ek_ key with only %s', async (key, scope) => {
    const res = await call(e, KEYS[key]);
    if (e.apiKey === scope) expect(res.status, JSON.stringify(res.body)).toBe(200);
    else expectRefused(res, 403, 'scope_denied');
  });

  it('ek_ key with every scope of these sections', async () => {
    const res = await call(e, KEYS.all);
    if (e.apiKey) expect(res.status, JSON.stringify(res.body)).toBe(200);
    else expectRefused(res, 403, 'scope_denied');
  });

  it('st_ from client_credentials with every capability', async () => {
    const res = await call(e, tokens.clientCredentials);
    if (e.capability && !e.runtimeOnly) expect(res.status, JSON.stringify(res.body)).toBe(200);
    else expectRefused(res, 403);
  });

  it('st_ from runtime_access with every capability', async () => {
    const res = await call(e, tokens.runtimeAccess);
    if (e.capability) expect(res.status, JSON.stringify(res.body)).toBe(200);
    else expectRefused(res, 403);
  });

  // Endpoints that take no session token at all are covered by the two rows above.
  if (e.capability !== undefined) {
    it('st_ from each grant without the capability: 403', async () => {
      expectRefused(await call(e, tokens[`cc-without-${e.name}`]), 403);
      expectRefused(await call(e, tokens[`ra-without-${e.name}`]), 403);
    });
  }

  it('application JWT with kb.read', async () => {
    const res = await call(e, tokens.jwtKbRead);
    if (e.app) expect(res.status, JSON.stringify(res.body)).toBe(200);
    else expectRefused(res, 403, 'scope_denied');
  });

  it('application JWT without kb.read: 403', async () => {
    expectRefused(await call(e, tokens.jwtNoKb), 403, 'scope_denied');
  });
});

describe('expired credentials', () => {
  let timed: TestEmulator;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const expired: Record<string, string> = {};

  beforeAll(async () => {
    timed = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN, clock });
    expired.clientCredentials = await sessionToken(timed, 'client_credentials', { ttlSeconds: 60 });
    expired.runtimeAccess = await sessionToken(timed, 'runtime_access', { ttlSeconds: 60 });
    expired.jwt = await appToken(timed, 'bob@acme.test', 'openid kb.read');
    // Before expiry they work.
    expect((await timed.request('GET', `${API}/knowledge-bases`, { token: expired.runtimeAccess })).status).toBe(200);
    expect((await timed.request('GET', `${API}/knowledge-bases`, { token: expired.jwt })).status).toBe(200);
    await clock.advance(3601 * 1000);
  });
  afterAll(async () => timed?.close());

  it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s: expired st_ (both grants) and JWT answer 401 invalid_session_token', async (_name, e) => {
    for (const token of [expired.clientCredentials!, expired.runtimeAccess!, expired.jwt!]) {
      const res = await timed.request(e.method, e.path, { token, ...(e.body !== undefined ? { body: e.body } : {}) });
      expectRefused(res, 401, 'invalid_session_token');
    }
  });
});

describe('rate limits', () => {
  it('answers 429 rate_limited with Retry-After on these endpoints too (per API key)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    const seed = { ...kbTestSeed(), limits: { per_api_key: 1, per_session_token: 0, per_tenant: 0, per_client_id: 0 } };
    const limited = await startTestEmulator(seed, { clock });
    try {
      const first = await limited.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead });
      expect(first.status).toBe(200);
      const second = await limited.request('POST', `${API}/memories/recall`, { token: KEYS.kbRead, body: {} });
      expect(second.status).toBe(429);
      expect(second.body).toMatchObject({ success: false, code: 4290, error: { code: 'rate_limited' } });
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await clock.advance(1000);
      expect((await limited.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
