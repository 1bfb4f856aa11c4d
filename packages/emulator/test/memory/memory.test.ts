/**
 * Memory over loopback (spec "Memory"): events, recall with its scopes, limits, group_id and degraded answers,
 * list, delete with the ownership check, and the tenant taken from the credential.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, IDS, kbTestSeed, KEYS } from '../kb/fixtures.js';

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());

let counter = 0;
/** Fresh keys per test, so that tests do not see each other's memories. */
function keys(over: Record<string, string> = {}): { user_id: string; agent_id: string; session_id: string } & Record<string, string> {
  counter += 1;
  return { user_id: `user-${counter}`, agent_id: IDS.helper, session_id: `session-${counter}`, ...over };
}

async function event(body: Record<string, unknown>, token: string = KEYS.memWrite): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return emu.request('POST', `${API}/memories/events`, { token, body });
}

async function recall(body: Record<string, unknown>, token: string = KEYS.memRead) {
  return emu.request('POST', `${API}/memories/recall`, { token, body });
}

async function list(query: Record<string, string>, token: string = KEYS.memRead) {
  return emu.request('GET', `${API}/memories?${new URLSearchParams(query).toString()}`, { token });
}

async function remove(id: string, query: Record<string, string>, token: string = KEYS.memWrite) {
  return emu.request('DELETE', `${API}/memories/${encodeURIComponent(id)}?${new URLSearchParams(query).toString()}`, { token });
}

/** The id of the only memory with this content in a scope listing. */
async function idOf(query: Record<string, string>, content: string): Promise<string> {
  const res = await list(query);
  const item = res.body.data.items.find((m: { content: string }) => m.content === content);
  if (!item) throw new Error(`no memory "${content}" in ${JSON.stringify(res.body)}`);
  return item.id as string;
}

afterEach(async () => {
  for (const scope of ['user_long_term', 'agent_private', 'session', 'group_shared']) {
    await emu.request('PUT', `/_emulator/memory/scope-failures/${scope}`, { token: ADMIN, body: { failing: false } });
  }
});

describe('events', () => {
  it('writes an event and answers ok=true; recall then finds it', async () => {
    const k = keys();
    const res = await event({ ...k, content: 'The user is allergic to peanuts.' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200, data: { ok: true } });
    const found = await recall({ ...k, query: 'peanuts allergy' });
    expect(found.body.data.items.map((m: { content: string }) => m.content)).toContain('The user is allergic to peanuts.');
  });

  it.each(['user_id', 'agent_id', 'session_id', 'content'])('requires %s', async (field) => {
    const body: Record<string, unknown> = { ...keys(), content: 'x' };
    delete body[field];
    const res = await event(body);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(new RegExp(`^${field}: `));
  });

  it('refuses tenant_id in the body with 400', async () => {
    const res = await event({ ...keys(), content: 'x', tenant_id: 1001 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_argument');
    expect(res.body.message).toMatch(/^tenant_id: /);
  });
});

describe('recall', () => {
  it('ranks by relevance to the query, with scores in [0, 1]', async () => {
    const k = keys();
    await event({ ...k, content: 'The user lives in Lisbon.' });
    await event({ ...k, content: 'The user drives an electric car to work.' });
    await event({ ...k, content: 'The user has two cats named Miso and Tofu.' });
    const res = await recall({ ...k, query: 'what are the names of the cats' });
    expect(res.status).toBe(200);
    const items = res.body.data.items as { id: string; content: string; score: number }[];
    expect(items[0]!.content).toBe('The user has two cats named Miso and Tofu.');
    for (const m of items) {
      expect(m.score).toBeGreaterThanOrEqual(0);
      expect(m.score).toBeLessThanOrEqual(1);
      expect(m).toMatchObject({ id: expect.any(String), content: expect.any(String) });
    }
    expect(items.map((m) => m.score)).toEqual([...items.map((m) => m.score)].sort((a, b) => b - a));
    expect(res.body.data.degraded).toBe(false);
  });

  it('searches the default scope set: user_long_term, agent_private and session (and group_shared with a group_id)', async () => {
    const k = keys({ user_id: IDS.bob });
    await event({ ...k, content: 'In this session Bob asks about tea.' });
    await event({ ...k, group_id: 'g-tea', content: 'The tea club meets on Fridays.', scope: 'group_shared' });
    const res = await recall({ ...k, query: 'tea', limit: 50 });
    const contents = res.body.data.items.map((m: { content: string }) => m.content);
    expect(contents).toEqual(expect.arrayContaining(['Bob prefers green tea over coffee.', 'The helper answers in English unless asked otherwise.', 'In this session Bob asks about tea.']));
    expect(contents).not.toContain('The tea club meets on Fridays.');
    const withGroup = await recall({ ...k, group_id: 'g-tea', query: 'tea', limit: 50 });
    expect(withGroup.body.data.items.map((m: { content: string }) => m.content)).toContain('The tea club meets on Fridays.');
  });

  it('narrows to the scopes given', async () => {
    const k = keys({ user_id: IDS.bob });
    await event({ ...k, content: 'Session note about green tea.' });
    const res = await recall({ ...k, query: 'green tea', scopes: ['user_long_term'] });
    expect(res.body.data.items.map((m: { content: string }) => m.content)).toEqual(['Bob prefers green tea over coffee.']);
    const session = await recall({ ...k, query: 'green tea', scopes: ['session'] });
    expect(session.body.data.items.map((m: { content: string }) => m.content)).toEqual(['Session note about green tea.']);
  });

  it('applies limit per scope (default 10)', async () => {
    const k = keys();
    for (let i = 0; i < 12; i += 1) await event({ ...k, content: `session fact ${i} about budgets` });
    for (let i = 0; i < 3; i += 1) await event({ ...k, content: `long-term fact ${i} about budgets`, scope: 'user_long_term' });
    const byDefault = await recall({ ...k, query: 'budgets', scopes: ['session', 'user_long_term'] });
    expect(byDefault.body.data.items).toHaveLength(13);
    const two = await recall({ ...k, query: 'budgets', scopes: ['session', 'user_long_term'], limit: 2 });
    const items = two.body.data.items as { content: string }[];
    expect(items).toHaveLength(4);
    expect(items.filter((m) => m.content.startsWith('session')).length).toBe(2);
    expect(items.filter((m) => m.content.startsWith('long-term')).length).toBe(2);
  });

  it.each([0, 51, 1.5, '5'])('refuses limit=%s with 400', async (limit) => {
    const res = await recall({ ...keys(), query: 'x', limit });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^limit: /);
  });

  it('refuses an unknown scope value and an empty scope list with 400', async () => {
    for (const scopes of [['everything'], []]) {
      const res = await recall({ ...keys(), query: 'x', scopes });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^scopes/);
    }
  });

  it.each(['user_id', 'agent_id', 'session_id', 'query'])('requires %s', async (field) => {
    const body: Record<string, unknown> = { ...keys(), query: 'x' };
    delete body[field];
    const res = await recall(body);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(new RegExp(`^${field}: `));
  });

  it('refuses tenant_id in the body with 400', async () => {
    const res = await recall({ ...keys(), query: 'x', tenant_id: '1001' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^tenant_id: /);
  });

  it('writes an event with a group_id to group_shared, and one without to session', async () => {
    const k = keys();
    await event({ ...k, group_id: 'g-default', content: 'said in the group' });
    await event({ ...k, content: 'said in private' });
    const group = await list({ ...k, group_id: 'g-default', scope: 'group_shared' });
    expect(group.body.data.items.map((m: { content: string }) => m.content)).toEqual(['said in the group']);
    const session = await list({ ...k, scope: 'session' });
    expect(session.body.data.items.map((m: { content: string }) => m.content)).toEqual(['said in private']);
  });

  it('shares group_shared memories with other users of the same group only', async () => {
    const author = keys();
    await event({ ...author, group_id: 'g-1', scope: 'group_shared', content: 'The project deadline is the 14th.' });
    const peer = keys({ group_id: 'g-1' });
    const seen = await recall({ ...peer, query: 'project deadline' });
    expect(seen.body.data.items.map((m: { content: string }) => m.content)).toContain('The project deadline is the 14th.');
    const otherGroup = await recall({ ...keys({ group_id: 'g-2' }), query: 'project deadline' });
    expect(otherGroup.body.data.items.map((m: { content: string }) => m.content)).not.toContain('The project deadline is the 14th.');
  });

  it('keeps tenants apart: another tenant with the same user and agent ids sees nothing', async () => {
    const k = keys();
    await event({ ...k, content: 'Acme-only memory about invoices.' });
    const res = await recall({ ...k, query: 'invoices' }, KEYS.globex);
    expect(res.status).toBe(200);
    expect(res.body.data.items).toEqual([]);
  });

  it('answers 200 with degraded=true and a reduced set when one scope backend fails', async () => {
    const k = keys({ user_id: IDS.bob });
    await event({ ...k, content: 'Session memory about green tea.' });
    const fault = await emu.request('PUT', '/_emulator/memory/scope-failures/session', { token: ADMIN, body: { failing: true } });
    expect(fault.status).toBe(200);
    const res = await recall({ ...k, query: 'green tea' });
    expect(res.status).toBe(200);
    expect(res.body.data.degraded).toBe(true);
    const contents = res.body.data.items.map((m: { content: string }) => m.content);
    expect(contents).toContain('Bob prefers green tea over coffee.');
    expect(contents).not.toContain('Session memory about green tea.');
    await emu.request('PUT', '/_emulator/memory/scope-failures/session', { token: ADMIN, body: { failing: false } });
    const healed = await recall({ ...k, query: 'green tea' });
    expect(healed.body.data.degraded).toBe(false);
    expect(healed.body.data.items.map((m: { content: string }) => m.content)).toContain('Session memory about green tea.');
  });

  it('is not degraded when the failing scope is not searched', async () => {
    await emu.request('PUT', '/_emulator/memory/scope-failures/group_shared', { token: ADMIN, body: { failing: true } });
    const res = await recall({ ...keys(), query: 'x', scopes: ['session'] });
    expect(res.body.data.degraded).toBe(false);
  });
});

describe('list', () => {
  it('lists user_long_term by default', async () => {
    const res = await list({ user_id: IDS.bob, agent_id: IDS.helper, session_id: 's' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ items: [expect.objectContaining({ id: 'mem-seed-tea', content: 'Bob prefers green tea over coffee.' })], degraded: false });
  });

  it('lists the given scope, newest first, up to limit', async () => {
    const k = keys();
    for (const c of ['first', 'second', 'third']) await event({ ...k, content: c });
    const res = await list({ ...k, scope: 'session' });
    expect(res.body.data.items.map((m: { content: string }) => m.content)).toEqual(['third', 'second', 'first']);
    const one = await list({ ...k, scope: 'session', limit: '1' });
    expect(one.body.data.items.map((m: { content: string }) => m.content)).toEqual(['third']);
  });

  it('answers degraded=true with no items when the scope backend fails', async () => {
    await emu.request('PUT', '/_emulator/memory/scope-failures/user_long_term', { token: ADMIN, body: { failing: true } });
    const res = await list({ user_id: IDS.bob, agent_id: IDS.helper, session_id: 's' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ items: [], degraded: true });
  });

  it('refuses missing keys, a bad scope or limit, and tenant_id with 400', async () => {
    for (const query of <Record<string, string>[]>[
      { agent_id: IDS.helper, session_id: 's' },
      { user_id: 'u', session_id: 's' },
      { user_id: 'u', agent_id: IDS.helper },
      { user_id: 'u', agent_id: IDS.helper, session_id: 's', scope: 'all' },
      { user_id: 'u', agent_id: IDS.helper, session_id: 's', limit: 'ten' },
      { user_id: 'u', agent_id: IDS.helper, session_id: 's', limit: '0' },
      { user_id: 'u', agent_id: IDS.helper, session_id: 's', limit: '201' },
      { user_id: 'u', agent_id: IDS.helper, session_id: 's', tenant_id: '1001' },
    ]) {
      const res = await list(query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
    }
  });
});

describe('delete', () => {
  it('deletes the caller user memory: deleted=1, rejected=0, and it is gone', async () => {
    const k = keys();
    await event({ ...k, content: 'to be forgotten' });
    const id = await idOf({ ...k, scope: 'session' }, 'to be forgotten');
    const res = await remove(id, k);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deleted: 1, rejected: 0 });
    expect((await list({ ...k, scope: 'session' })).body.data.items).toEqual([]);
    expect((await remove(id, k)).body.data).toEqual({ deleted: 0, rejected: 1 });
  });

  it('rejects, and keeps, another user memory', async () => {
    const owner = keys();
    await event({ ...owner, content: 'mine' });
    const id = await idOf({ ...owner, scope: 'session' }, 'mine');
    const res = await remove(id, { ...owner, user_id: 'someone-else' });
    expect(res.body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await list({ ...owner, scope: 'session' })).body.data.items).toHaveLength(1);
  });

  it('rejects an unknown id', async () => {
    const res = await remove('no-such-memory', keys());
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deleted: 0, rejected: 1 });
  });

  it('rejects a group memory deleted without its group_id', async () => {
    const k = keys();
    await event({ ...k, group_id: 'g-del', content: 'group note' });
    const id = await idOf({ ...k, group_id: 'g-del', scope: 'group_shared' }, 'group note');
    expect((await remove(id, k)).body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await remove(id, { ...k, group_id: 'g-del' })).body.data).toEqual({ deleted: 1, rejected: 0 });
  });

  it('rejects, and keeps, a memory in a scope the caller keys do not reach (another session, another group)', async () => {
    const k = keys();
    await event({ ...k, content: 'session-bound' });
    await event({ ...k, group_id: 'g-9', scope: 'group_shared', content: 'group-bound' });
    const sessionId = await idOf({ ...k, scope: 'session' }, 'session-bound');
    const groupId = await idOf({ ...k, group_id: 'g-9', scope: 'group_shared' }, 'group-bound');
    expect((await remove(sessionId, { ...k, session_id: 'another-session' })).body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await remove(groupId, k)).body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await remove(groupId, { ...k, group_id: 'g-10' })).body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await list({ ...k, scope: 'session' })).body.data.items).toHaveLength(1);
    expect((await remove(groupId, { ...k, group_id: 'g-9' })).body.data).toEqual({ deleted: 1, rejected: 0 });
  });

  it('rejects a memory of another tenant', async () => {
    const k = keys();
    await event({ ...k, content: 'acme secret' });
    const id = await idOf({ ...k, scope: 'session' }, 'acme secret');
    expect((await remove(id, k, KEYS.globex)).body.data).toEqual({ deleted: 0, rejected: 1 });
    expect((await list({ ...k, scope: 'session' })).body.data.items).toHaveLength(1);
  });

  it('refuses missing keys and tenant_id with 400', async () => {
    const queries: Record<string, string>[] = [{ agent_id: IDS.helper, session_id: 's' }, { user_id: 'u', agent_id: IDS.helper, session_id: 's', tenant_id: '1' }];
    for (const query of queries) {
      const res = await remove('x', query);
      expect(res.status).toBe(400);
    }
  });
});
