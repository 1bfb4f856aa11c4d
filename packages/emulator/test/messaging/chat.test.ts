/**
 * Proactive chat messages over loopback (spec "Proactive chat message"): target validation, strict EMP block checks
 * against the seed's registry, history of the direct conversation, 502 on delivery failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, IDS, kbTestSeed, KEYS } from '../kb/fixtures.js';

const PATH = `${API}/chat/messages`;

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());
afterEach(async () => {
  await emu.request('PUT', '/_emulator/chat/delivery-failure', { token: ADMIN, body: { failing: false } });
});

function message(blocks: unknown[], target: Record<string, unknown> = {}): Record<string, unknown> {
  return { target: { type: 'agent_conversation', user_id: IDS.bob, agent_id: IDS.helper, ...target }, message: { blocks } };
}

async function send(body: Record<string, unknown>, token: string = KEYS.chat) {
  return emu.request('POST', PATH, { token, body });
}

async function history(conversationId: string): Promise<{ blocks: unknown[] }[]> {
  const res = await emu.request('GET', `/_emulator/conversations/${conversationId}/messages`, { token: ADMIN });
  expect(res.status).toBe(200);
  return res.body.items as { blocks: unknown[] }[];
}

async function conversationOf(userId: string, agentId: string): Promise<string | undefined> {
  const res = await emu.request('GET', `/_emulator/conversations?user_id=${userId}&agent_id=${agentId}`, { token: ADMIN });
  return res.body.items[0]?.conversation_id as string | undefined;
}

describe('delivery', () => {
  it('writes the blocks, unchanged, to the direct conversation history', async () => {
    const blocks = [
      { type: 'text', text: 'Your laptop is ready for pickup.' },
      { type: 'link', text: 'Pickup desk', url: 'https://it.acme.test/desk' },
      { type: 'markdown', content: '**Room** 4.12' },
      { type: 'image', url: 'https://it.acme.test/map.png', alt: 'map' },
    ];
    const res = await send(message(blocks));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200, data: { message_id: expect.any(String), conversation_id: expect.any(String), room_id: expect.any(String) } });
    const items = await history(res.body.data.conversation_id);
    expect(items.at(-1)).toMatchObject({ message_id: res.body.data.message_id, blocks });
  });

  it('uses the same direct conversation as a notification for that user and agent', async () => {
    const note = await emu.request('POST', `${API}/notifications/agent-conversation`, {
      token: KEYS.notify,
      body: { user_id: IDS.carol, agent_id: IDS.helper, title: 'Hi', description: 'Hello' },
    });
    const res = await send(message([{ type: 'text', text: 'Follow-up' }], { user_id: IDS.carol }));
    expect(res.body.data.conversation_id).toBe(note.body.data.conversation_id);
    expect(await history(res.body.data.conversation_id)).toHaveLength(1);
  });

  it('answers 502 when delivery to the messaging backend fails, and writes nothing', async () => {
    const before = await conversationOf(IDS.dave, IDS.helper);
    expect((await emu.request('PUT', '/_emulator/chat/delivery-failure', { token: ADMIN, body: { failing: true } })).status).toBe(200);
    const res = await send(message([{ type: 'text', text: 'lost' }], { user_id: IDS.dave }));
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, code: 5020 });
    const after = await conversationOf(IDS.dave, IDS.helper);
    if (after !== undefined) expect(await history(after)).toHaveLength(before === undefined ? 0 : (await history(before)).length);
    await emu.request('PUT', '/_emulator/chat/delivery-failure', { token: ADMIN, body: { failing: false } });
    expect((await send(message([{ type: 'text', text: 'delivered' }], { user_id: IDS.dave }))).status).toBe(200);
  });
});

describe('EMP blocks: checked strictly against the registry, no fallback, no flattening', () => {
  it.each([
    ['an unknown type', { type: 'carousel', items: [] }, /^message\.blocks\[0\]\.type: unknown block type carousel/],
    ['a beta type', { type: 'card', title: 'Card' }, /^message\.blocks\[0\]\.type: block type card is beta/],
    ['a deprecated type', { type: 'plain', text: 'x' }, /^message\.blocks\[0\]\.type: block type plain is deprecated/],
    ['a block without type', { text: 'x' }, /^message\.blocks\[0\]\.type: required/],
    ['a non-string type', { type: 7 }, /^message\.blocks\[0\]\.type: must be a string/],
    ['a missing required field', { type: 'text' }, /^message\.blocks\[0\]\.text: required/],
    ['a field of the wrong type', { type: 'text', text: 42 }, /^message\.blocks\[0\]\.text: must be string/],
    ['a field the schema does not declare', { type: 'text', text: 'x', colour: 'red' }, /^message\.blocks\[0\]: unknown property: colour/],
    ['a field that breaks its pattern', { type: 'image', url: 'http://insecure.test/a.png' }, /^message\.blocks\[0\]\.url: /],
    ['an empty text', { type: 'text', text: '' }, /^message\.blocks\[0\]\.text: /],
    ['a non-object block', 'just text', /^message\.blocks\[0\]: must be an object/],
  ])('refuses %s with 400', async (_what, block, message_) => {
    const res = await send(message([block]));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_argument');
    expect(res.body.message).toMatch(message_);
  });

  it('refuses the whole message when one block of several is invalid, writing nothing', async () => {
    const res = await send(message([{ type: 'text', text: 'fine' }, { type: 'card', title: 'beta' }], { user_id: IDS.dave, agent_id: IDS.emptyAgent }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^message\.blocks\[1\]\.type: /);
    expect(await conversationOf(IDS.dave, IDS.emptyAgent)).toBeUndefined();
  });

  it('refuses an empty block list, a missing message, blocks that are not an array, and extra message fields', async () => {
    for (const body of [
      message([]),
      { target: { type: 'agent_conversation', user_id: IDS.bob, agent_id: IDS.helper } },
      { target: { type: 'agent_conversation', user_id: IDS.bob, agent_id: IDS.helper }, message: { blocks: 'hello' } },
      { target: { type: 'agent_conversation', user_id: IDS.bob, agent_id: IDS.helper }, message: { blocks: [{ type: 'text', text: 'x' }], text: 'fallback' } },
    ]) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(/^(unknown property: )?message/);
    }
  });

  it('uses the registry of the seed', async () => {
    const seed = { ...kbTestSeed(), emp_block_registry: [{ type: 'poll', status: 'stable', schema: { type: 'object', required: ['question', 'options'], properties: { question: { type: 'string' }, options: { type: 'array', items: { type: 'string' }, minItems: 2 } } } }] };
    const own = await startTestEmulator(seed);
    try {
      const ok = await own.request('POST', PATH, { token: KEYS.chat, body: message([{ type: 'poll', question: 'Lunch?', options: ['yes', 'no'] }]) });
      expect(ok.status).toBe(200);
      const short = await own.request('POST', PATH, { token: KEYS.chat, body: message([{ type: 'poll', question: 'Lunch?', options: ['yes'] }]) });
      expect(short.status).toBe(400);
      expect(short.body.message).toMatch(/^message\.blocks\[0\]\.options: /);
      const text = await own.request('POST', PATH, { token: KEYS.chat, body: message([{ type: 'text', text: 'x' }]) });
      expect(text.status).toBe(400);
      expect(text.body.message).toMatch(/unknown block type text/);
    } finally {
      await own.close();
    }
  });

  it('refuses to start with a registry schema that does not compile, naming the seed path', async () => {
    const seed = { ...kbTestSeed(), emp_block_registry: [{ type: 'bad', status: 'stable', schema: { type: 'object', properties: { a: { type: 'strnig' } } } }] };
    await expect(startTestEmulator(seed)).rejects.toThrow(/emp_block_registry\[0\]\.schema/);
  });
});

describe('target', () => {
  it('accepts only type agent_conversation and no other target properties', async () => {
    const wrongType = await send(message([{ type: 'text', text: 'x' }], { type: 'group_conversation' }));
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toMatch(/^target\.type: /);
    const extra = await send(message([{ type: 'text', text: 'x' }], { room_id: 'r1' }));
    expect(extra.status).toBe(400);
    expect(extra.body.message).toBe('unknown property: target.room_id');
  });

  it('refuses properties beyond target and message', async () => {
    const res = await send({ ...message([{ type: 'text', text: 'x' }]), priority: 'high' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('unknown property: priority');
  });

  it('requires UUIDs for user_id and agent_id', async () => {
    expect((await send(message([{ type: 'text', text: 'x' }], { user_id: 'bob' }))).status).toBe(400);
    expect((await send(message([{ type: 'text', text: 'x' }], { agent_id: 'helper' }))).status).toBe(400);
  });

  it('refuses a non-member user and a deleted agent with 400, an invisible agent with 400, an unknown agent with 404', async () => {
    const nonMember = await send(message([{ type: 'text', text: 'x' }], { user_id: IDS.globexGreg }));
    expect(nonMember.status).toBe(400);
    expect(nonMember.body.message).toMatch(/^target\.user_id: /);
    const deleted = await send(message([{ type: 'text', text: 'x' }], { agent_id: IDS.goneAgent }));
    expect(deleted.status).toBe(400);
    const hidden = await send(message([{ type: 'text', text: 'x' }], { agent_id: IDS.secretAgent }));
    expect(hidden.status).toBe(400);
    expect(hidden.body.message).toMatch(/^target\.agent_id: .*not visible/);
    const unknown = await send(message([{ type: 'text', text: 'x' }], { agent_id: IDS.globexAgent }));
    expect(unknown.status).toBe(404);
  });
});
