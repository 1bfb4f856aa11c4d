/**
 * Cross-user audit over loopback (spec "Cross-user audit"): the three endpoints with their scopes, metadata only,
 * and an audit record of type tenant.admin.user_kb_inspect (who, whom, what, when) for each call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ACME, ADMIN, API, IDS, kbTestSeed, KEYS, RUNTIME_CLIENT, sessionToken } from '../kb/fixtures.js';

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());

interface AuditRecord {
  id: string;
  event_type: string;
  tenant_id: number;
  actor: { credential_kind: string; credential_id: string; client_id?: string };
  target_user_id: string;
  action: string;
  knowledge_base_id: string | null;
  outcome_status: number;
  result_count: number | null;
  occurred_at: string;
}

async function auditLog(): Promise<AuditRecord[]> {
  const res = await emu.request('GET', '/_emulator/audit-log', { token: ADMIN });
  expect(res.status).toBe(200);
  return res.body.items as AuditRecord[];
}

/** Runs a call and returns the audit records it added. */
async function withAudit<T>(call: () => Promise<T>): Promise<{ result: T; records: AuditRecord[] }> {
  const before = (await auditLog()).length;
  const result = await call();
  return { result, records: (await auditLog()).slice(before) };
}

describe('GET /users/{user_id}/knowledge-bases', () => {
  it('lists the metadata of the user private KBs and writes one audit record', async () => {
    const { result: res, records } = await withAudit(() => emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: KEYS.auditList }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200 });
    expect(res.body.data.items).toEqual([
      expect.objectContaining({ id: IDS.bobNotes, name: 'Bob notes', space_kind: 'personal', visibility: 'private', document_count: 1 }),
    ]);
    expect(records).toHaveLength(1);
    expect(records[0]).toEqual({
      id: expect.any(String),
      event_type: 'tenant.admin.user_kb_inspect',
      tenant_id: ACME,
      actor: { credential_kind: 'api_key', credential_id: expect.any(String) },
      target_user_id: IDS.bob,
      action: 'list_knowledge_bases',
      knowledge_base_id: null,
      outcome_status: 200,
      result_count: 1,
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('gives each user only their own private KBs (none for a user without any)', async () => {
    const carol = await emu.request('GET', `${API}/users/${IDS.carol}/knowledge-bases`, { token: KEYS.auditList });
    expect(carol.body.data.items.map((k: { id: string }) => k.id)).toEqual([IDS.carolNotes]);
    const dave = await emu.request('GET', `${API}/users/${IDS.dave}/knowledge-bases`, { token: KEYS.auditList });
    expect(dave.body.data.items).toEqual([]);
  });

  it('answers 404 for a user who is not in the tenant, and audits the attempt', async () => {
    for (const userId of [IDS.globexGreg, '0f0f0f0f-0000-4000-8000-00000000ffff', 'nobody']) {
      const { result: res, records } = await withAudit(() => emu.request('GET', `${API}/users/${userId}/knowledge-bases`, { token: KEYS.auditList }));
      expect(res.status).toBe(404);
      expect(records).toEqual([expect.objectContaining({ target_user_id: userId, outcome_status: 404 })]);
    }
  });

  it('refuses a key without tenant.kb.list_user_private with 403', async () => {
    const res = await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: KEYS.auditRead });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_denied');
  });
});

describe('GET /users/{user_id}/knowledge-bases/{knowledge_base_id}', () => {
  it('returns the KB and audits which KB was read', async () => {
    const { result: res, records } = await withAudit(() => emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}`, { token: KEYS.auditList }));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: IDS.bobNotes, owner_account_id: expect.any(Number), visibility: 'private' });
    expect(records).toEqual([expect.objectContaining({ action: 'read_knowledge_base', knowledge_base_id: IDS.bobNotes, target_user_id: IDS.bob, outcome_status: 200 })]);
  });

  it('answers 404 kb.not_found for another user KB, a tenant KB and another tenant KB', async () => {
    for (const kbId of [IDS.carolNotes, IDS.handbook, IDS.globexKb]) {
      const res = await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases/${kbId}`, { token: KEYS.auditList });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('kb.not_found');
    }
  });

  it('refuses a key without tenant.kb.list_user_private with 403', async () => {
    expect((await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}`, { token: KEYS.auditRead })).status).toBe(403);
  });
});

describe('GET /users/{user_id}/knowledge-bases/{knowledge_base_id}/documents', () => {
  it('lists document metadata, never content, and audits it', async () => {
    const { result: res, records } = await withAudit(() =>
      emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}/documents`, { token: KEYS.auditRead }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.items).toEqual([
      { id: IDS.bobDoc, knowledge_base_id: IDS.bobNotes, title: 'Diary', mime_type: 'text/plain', size_bytes: expect.any(Number), chunk_count: 1, status: 'ready', created_at: expect.any(String) },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('launch date');
    expect(records).toEqual([expect.objectContaining({ action: 'list_documents', knowledge_base_id: IDS.bobNotes, result_count: 1, outcome_status: 200 })]);
    expect(JSON.stringify(await auditLog())).not.toContain('launch date');
  });

  it('refuses a key with only tenant.kb.list_user_private with 403', async () => {
    const res = await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases/${IDS.bobNotes}/documents`, { token: KEYS.auditList });
    expect(res.status).toBe(403);
  });

  it('answers 404 kb.not_found for a KB that is not the user private KB', async () => {
    const res = await emu.request('GET', `${API}/users/${IDS.carol}/knowledge-bases/${IDS.bobNotes}/documents`, { token: KEYS.auditRead });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('kb.not_found');
  });
});

describe('who is recorded', () => {
  it('records a session token caller with its client id', async () => {
    const st = await sessionToken(emu, 'client_credentials', { capabilities: ['kb.list_user_private'] });
    const { result: res, records } = await withAudit(() => emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: st }));
    expect(res.status).toBe(200);
    expect(records).toEqual([expect.objectContaining({ actor: expect.objectContaining({ credential_kind: 'session_token', client_id: RUNTIME_CLIENT.id }) })]);
  });

  it('distinguishes callers: two keys give two different credential ids', async () => {
    const a = await withAudit(() => emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: KEYS.auditList }));
    const b = await withAudit(() => emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: KEYS.all }));
    expect(a.records[0]!.actor.credential_id).not.toBe(b.records[0]!.actor.credential_id);
  });

  it('does not audit calls refused before reading anything (401, 403)', async () => {
    const { records } = await withAudit(async () => {
      await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: 'ek_wrong_000' });
      await emu.request('GET', `${API}/users/${IDS.bob}/knowledge-bases`, { token: KEYS.kbRead });
    });
    expect(records).toEqual([]);
  });
});
