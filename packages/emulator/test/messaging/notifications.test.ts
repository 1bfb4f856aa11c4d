/**
 * System notifications over loopback (spec "System notification"): validation rules, target checks, the direct
 * conversation prepared or reused, nothing written to chat history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, appToken, IDS, kbTestSeed, KEYS, sessionToken } from '../kb/fixtures.js';

const PATH = `${API}/notifications/agent-conversation`;

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());

function valid(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { user_id: IDS.bob, agent_id: IDS.helper, title: 'Expense report approved', description: 'Your March expense report was approved.', ...over };
}

async function notify(body: Record<string, unknown>, token: string = KEYS.notify) {
  return emu.request('POST', PATH, { token, body });
}

describe('delivery', () => {
  it('answers notification_id, conversation_id and room_id in the envelope', async () => {
    const res = await notify(valid({ third_notification_id: 'erp-4711' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200 });
    expect(res.body.data).toEqual({ notification_id: expect.any(String), conversation_id: expect.any(String), room_id: expect.any(String) });
    const delivered = await emu.request('GET', '/_emulator/notifications', { token: ADMIN });
    expect(delivered.body.items).toContainEqual(
      expect.objectContaining({
        notification_id: res.body.data.notification_id,
        conversation_id: res.body.data.conversation_id,
        user_id: IDS.bob,
        agent_id: IDS.helper,
        title: 'Expense report approved',
        third_notification_id: 'erp-4711',
      }),
    );
  });

  it('reuses the direct conversation of the same user and agent, and prepares another for another agent', async () => {
    const first = await notify(valid());
    const second = await notify(valid({ title: 'Second' }));
    expect(second.body.data.conversation_id).toBe(first.body.data.conversation_id);
    expect(second.body.data.room_id).toBe(first.body.data.room_id);
    expect(second.body.data.notification_id).not.toBe(first.body.data.notification_id);
    const other = await notify(valid({ agent_id: IDS.emptyAgent }));
    expect(other.body.data.conversation_id).not.toBe(first.body.data.conversation_id);
  });

  it('writes nothing to the chat history of the conversation', async () => {
    const res = await notify(valid({ user_id: IDS.dave }));
    const history = await emu.request('GET', `/_emulator/conversations/${res.body.data.conversation_id}/messages`, { token: ADMIN });
    expect(history.status).toBe(200);
    expect(history.body.items).toEqual([]);
  });

  it('has no idempotency on third_notification_id: the same value delivers twice', async () => {
    const a = await notify(valid({ third_notification_id: 'same' }));
    const b = await notify(valid({ third_notification_id: 'same' }));
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.data.notification_id).not.toBe(a.body.data.notification_id);
  });
});

describe('validation', () => {
  it.each(['user_id', 'agent_id', 'title', 'description'])('requires %s', async (field) => {
    const body = valid();
    delete body[field];
    const res = await notify(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 4000, error: { code: 'invalid_argument' } });
    expect(res.body.message).toMatch(new RegExp(`^${field}: `));
  });

  it('refuses properties the spec does not list (e.g. a URL to jump to)', async () => {
    const res = await notify(valid({ url: 'https://example.com' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('unknown property: url');
  });

  it('refuses ids that are not UUIDs', async () => {
    expect((await notify(valid({ user_id: 'bob' }))).status).toBe(400);
    expect((await notify(valid({ agent_id: 'helper' }))).status).toBe(400);
  });

  it('counts title length in characters: 80 accepted, 81 and empty refused', async () => {
    expect((await notify(valid({ title: 'x'.repeat(80) }))).status).toBe(200);
    // 80 emoji are 160 UTF-16 code units but 80 characters.
    expect((await notify(valid({ title: '🎉'.repeat(80) }))).status).toBe(200);
    for (const title of ['x'.repeat(81), '🎉'.repeat(81), '']) {
      const res = await notify(valid({ title }));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^title: /);
    }
  });

  it('counts description length in characters: 1000 accepted, 1001 and empty refused', async () => {
    expect((await notify(valid({ description: '字'.repeat(1000) }))).status).toBe(200);
    expect((await notify(valid({ description: '𝄞'.repeat(1000) }))).status).toBe(200);
    for (const description of ['字'.repeat(1001), '']) {
      const res = await notify(valid({ description }));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^description: /);
    }
  });

  it('limits third_notification_id to 128 characters', async () => {
    expect((await notify(valid({ third_notification_id: 'n'.repeat(128) }))).status).toBe(200);
    const res = await notify(valid({ third_notification_id: 'n'.repeat(129) }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^third_notification_id: /);
  });
});

describe('target user and agent', () => {
  it('refuses a user who is not a member of the tenant with 400 (unknown, or of another tenant)', async () => {
    for (const userId of ['0f0f0f0f-0000-4000-8000-00000000ffff', IDS.globexGreg]) {
      const res = await notify(valid({ user_id: userId }));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^user_id: /);
    }
  });

  it('refuses a deleted (left) user with 400', async () => {
    const del = await emu.request('DELETE', `${API}/org/members/${IDS.erin}`, { token: KEYS.orgWrite });
    expect(del.status).toBe(204);
    const res = await notify(valid({ user_id: IDS.erin }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^user_id: /);
  });

  it('refuses a suspended member with 400 (not active)', async () => {
    const seed = kbTestSeed();
    const own = await startTestEmulator(seed);
    try {
      const patch = await own.request('PATCH', `${API}/org/members/${IDS.dave}`, { token: KEYS.orgWrite, body: { status: 'suspended' } });
      expect(patch.status).toBe(200);
      const res = await own.request('POST', PATH, { token: KEYS.notify, body: valid({ user_id: IDS.dave }) });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^user_id: .*suspended/);
    } finally {
      await own.close();
    }
  });

  it('refuses a deleted agent with 400', async () => {
    const res = await notify(valid({ agent_id: IDS.goneAgent }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^agent_id: .*deleted/);
  });

  it('refuses an agent the user cannot see with 400, and accepts it for a user who can', async () => {
    const hidden = await notify(valid({ agent_id: IDS.secretAgent }));
    expect(hidden.status).toBe(400);
    expect(hidden.body.message).toMatch(/^agent_id: .*not visible/);
    expect((await notify(valid({ agent_id: IDS.secretAgent, user_id: IDS.carol }))).status).toBe(200);
  });

  it('answers 404 for an unknown agent or an agent of another tenant', async () => {
    for (const agentId of ['a0000000-0000-4000-8000-00000000ffff', IDS.globexAgent]) {
      const res = await notify(valid({ agent_id: agentId }));
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(4040);
    }
  });
});

describe('credentials', () => {
  it('refuses an application JWT (administrator or not) and session tokens with 403', async () => {
    const admin = await appToken(emu, 'ada@acme.test');
    expect((await notify(valid(), admin)).status).toBe(403);
    const st = await sessionToken(emu, 'client_credentials');
    expect((await notify(valid(), st)).status).toBe(403);
  });

  it('refuses an ek_ key without tenant.notification.write with 403', async () => {
    const res = await notify(valid(), KEYS.chat);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_denied');
  });
});
