/**
 * POST /knowledge/retrieve over loopback: its five rules (spec "Knowledge bases", rules 1-5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, appToken, IDS, kbTestSeed, KEYS, sessionToken } from './fixtures.js';

const PATH = `${API}/knowledge/retrieve`;

let emu: TestEmulator;
let runtime: string;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
  runtime = await sessionToken(emu, 'runtime_access');
});
afterAll(async () => emu?.close());

describe('rule 1: the tenant comes from the token; the agent is validated on every call', () => {
  it('answers with tool_name, query, items, sources and result_quality hit', async () => {
    const res = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.helper, query: 'request a refund' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200 });
    const data = res.body.data;
    expect(data.tool_name).toEqual(expect.any(String));
    expect(data.query).toBe('request a refund');
    expect(data.result_quality).toBe('hit');
    expect(data.items[0]).toEqual({
      reference_id: expect.any(String),
      knowledge_base_id: IDS.handbook,
      kb_name: 'Handbook',
      document_id: IDS.refundDoc,
      score: expect.any(Number),
      content: expect.stringContaining('request a refund'),
    });
    expect(data.items[0].score).toBeGreaterThan(0);
    expect(data.items[0].score).toBeLessThanOrEqual(1);
    expect(data.sources).toContainEqual(expect.objectContaining({ document_id: IDS.refundDoc }));
  });

  it.each([
    ['unknown', 'a0000000-0000-4000-8000-00000000ffff'],
    ['deleted', IDS.goneAgent],
    ['of another tenant', IDS.globexAgent],
  ])('answers 404 for an %s agent', async (_what, agentId) => {
    const res = await emu.request('POST', PATH, { token: runtime, body: { agent_id: agentId, query: 'refund' } });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, code: 4040 });
  });

  it('refuses a malformed agent_id, a missing query and unknown properties with 400', async () => {
    for (const body of [{ agent_id: 'helper', query: 'x' }, { agent_id: IDS.helper }, { agent_id: IDS.helper, query: 'x', top_k: 3 }, { query: 'x' }]) {
      const res = await emu.request('POST', PATH, { token: runtime, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
    }
  });
});

describe('rule 2: a token bound to an agent must name that agent', () => {
  it('accepts the bound agent and refuses another with 403', async () => {
    const bound = await sessionToken(emu, 'runtime_access', { agentId: IDS.helper });
    expect((await emu.request('POST', PATH, { token: bound, body: { agent_id: IDS.helper, query: 'refund' } })).status).toBe(200);
    const other = await emu.request('POST', PATH, { token: bound, body: { agent_id: IDS.emptyAgent, query: 'refund' } });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe(4030);
  });
});

describe('rule 3: every KB associated with the agent is searched', () => {
  it('finds passages in each of the agent KBs, and nothing outside them', async () => {
    const leave = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.helper, query: 'parental leave' } });
    expect(leave.body.data.items[0]).toMatchObject({ knowledge_base_id: IDS.policies, kb_name: 'Policies' });
    const refund = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.helper, query: 'refund payment card' } });
    expect(refund.body.data.items[0]).toMatchObject({ knowledge_base_id: IDS.handbook });
    // The Secret agent has only Policies: the handbook's refund passage is not searched.
    const secret = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.secretAgent, query: 'refund payment card' } });
    expect(secret.body.data.items).toEqual([]);
    // Bob's private diary is in no agent's KBs.
    const diary = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.helper, query: 'launch date March' } });
    expect(diary.body.data.items).toEqual([]);
  });
});

describe('rule 4: no associated KB or no match is 200 with items=[]', () => {
  it('answers empty for an agent without KBs', async () => {
    const res = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.emptyAgent, query: 'refund' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ items: [], sources: [], result_quality: 'empty', query: 'refund' });
  });

  it('answers empty when nothing matches', async () => {
    const res = await emu.request('POST', PATH, { token: runtime, body: { agent_id: IDS.helper, query: 'quantum chromodynamics' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ items: [], result_quality: 'empty' });
  });
});

describe('rule 5: only a runtime_access session token', () => {
  it('refuses an ek_ key, even with tenant.kb.read', async () => {
    const res = await emu.request('POST', PATH, { token: KEYS.all, body: { agent_id: IDS.helper, query: 'refund' } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_denied');
  });

  it('refuses a client_credentials session token', async () => {
    const cc = await sessionToken(emu, 'client_credentials');
    const res = await emu.request('POST', PATH, { token: cc, body: { agent_id: IDS.helper, query: 'refund' } });
    expect(res.status).toBe(403);
  });

  it('refuses an application token with kb.read', async () => {
    const jwt = await appToken(emu, 'bob@acme.test');
    const res = await emu.request('POST', PATH, { token: jwt, body: { agent_id: IDS.helper, query: 'refund' } });
    expect(res.status).toBe(403);
  });

  it('refuses a runtime_access token without a knowledge capability', async () => {
    const noKb = await sessionToken(emu, 'runtime_access', { capabilities: ['memory.read'] });
    const res = await emu.request('POST', PATH, { token: noKb, body: { agent_id: IDS.helper, query: 'refund' } });
    expect(res.status).toBe(403);
  });
});
