/**
 * The area's seed keys (strict, with paths in errors) and a restart over the same --db file: seeding stays
 * idempotent and a document left `ingesting` is ingested after the restart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, drainIngestion, IDS, kbTestSeed, KEYS, uploadRaw } from './fixtures.js';

type MutableSeed = { tenants: Record<string, unknown>[] } & Record<string, unknown>;

const dir = mkdtempSync(join(tmpdir(), 'orgsync-kb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('seed validation', () => {
  it('needs owner_email for a private KB', async () => {
    const seed = kbTestSeed() as MutableSeed;
    seed.tenants[0]!.knowledge_bases = [{ name: 'Orphan', visibility: 'private' }];
    await expect(startTestEmulator(seed)).rejects.toThrow(/tenants\[0\]\.knowledge_bases\[0\]\.owner_email: a personal \(private\) knowledge base needs owner_email/);
  });

  it('refuses unknown keys of a KB and unsupported seeded document types', async () => {
    const seed = kbTestSeed() as MutableSeed;
    seed.tenants[0]!.knowledge_bases = [{ name: 'X', colour: 'red' }];
    await expect(startTestEmulator(seed)).rejects.toThrow(/tenants\[0\]\.knowledge_bases\[0\]\.colour: unknown key/);
    seed.tenants[0]!.knowledge_bases = [{ name: 'X', documents: [{ title: 'p', mime_type: 'application/pdf', content: 'x' }] }];
    await expect(startTestEmulator(seed)).rejects.toThrow(/knowledge_bases\[0\]\.documents\[0\]\.mime_type/);
  });

  it('refuses duplicate KB ids, an owner who is not a member, and an agent KB that is not seeded in its tenant', async () => {
    const dup = kbTestSeed() as MutableSeed;
    dup.tenants[1]!.knowledge_bases = [{ id: IDS.handbook, name: 'Copy' }];
    dup.tenants[1]!.agents = [];
    await expect(startTestEmulator(dup)).rejects.toThrow(`seed: tenants[1].knowledge_bases[0].id: duplicate knowledge base id ${IDS.handbook}`);
    const owner = kbTestSeed() as MutableSeed;
    owner.tenants[0]!.knowledge_bases = [{ name: 'Ghost notes', visibility: 'private', owner_email: 'ghost@acme.test' }];
    owner.tenants[0]!.agents = [];
    await expect(startTestEmulator(owner)).rejects.toThrow('seed: tenants[0].knowledge_bases[0].owner_email: no member with e-mail ghost@acme.test in this tenant');
    const agent = kbTestSeed() as MutableSeed;
    (agent.tenants[0]!.agents as { knowledge_base_ids: string[] }[])[0]!.knowledge_base_ids = [IDS.globexKb];
    await expect(startTestEmulator(agent)).rejects.toThrow(`seed: tenants[0].agents[0].knowledge_base_ids[0]: no seeded knowledge base ${IDS.globexKb} in this tenant`);
  });

  it('gives KBs and documents with equal names distinct derived ids', async () => {
    const seed = kbTestSeed() as MutableSeed;
    seed.tenants[0]!.knowledge_bases = [
      { name: 'Twin', documents: [{ title: 'Same', content: 'first copy' }, { title: 'Same', content: 'second copy' }] },
      { name: 'Twin' },
    ];
    seed.tenants[0]!.agents = [];
    const twins = await startTestEmulator(seed);
    try {
      const list = await twins.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead });
      const ids = list.body.data.items.map((k: { id: string }) => k.id);
      expect(ids).toHaveLength(2);
      expect(new Set(ids).size).toBe(2);
      expect(list.body.data.items.map((k: { document_count: number }) => k.document_count)).toEqual([2, 0]);
    } finally {
      await twins.close();
    }
  });

  it('needs session_id for a session memory and group_id for a group_shared one', async () => {
    const seed = kbTestSeed() as MutableSeed;
    seed.tenants[0]!.memories = [{ scope: 'session', user_id: 'u', agent_id: 'a', content: 'c' }];
    await expect(startTestEmulator(seed)).rejects.toThrow(/tenants\[0\]\.memories\[0\]\.session_id/);
    seed.tenants[0]!.memories = [{ scope: 'group_shared', user_id: 'u', agent_id: 'a', content: 'c' }];
    await expect(startTestEmulator(seed)).rejects.toThrow(/tenants\[0\]\.memories\[0\]\.group_id/);
  });

  it('refuses a block type listed twice and a registry entry with a bad status', async () => {
    const twice = { ...kbTestSeed(), emp_block_registry: [{ type: 't', status: 'stable', schema: { type: 'object' } }, { type: 't', status: 'beta', schema: { type: 'object' } }] };
    await expect(startTestEmulator(twice)).rejects.toThrow(/emp_block_registry\[1\]\.type: duplicate block type t/);
    const status = { ...kbTestSeed(), emp_block_registry: [{ type: 't', status: 'experimental', schema: { type: 'object' } }] };
    await expect(startTestEmulator(status)).rejects.toThrow(/emp_block_registry\[0\]\.status/);
  });
});

describe('restart over the same database file', () => {
  it('keeps seeded KBs single and ingests a document left ingesting', async () => {
    const dbPath = join(dir, 'emu.db');
    const first = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN, dbPath });
    let docId: string;
    try {
      await first.request('PUT', '/_emulator/kb/ingestion', { token: ADMIN, body: { paused: true } });
      const up = await uploadRaw(first, KEYS.kbWrite, IDS.policies, 'Remote work is allowed two days a week.', { title: 'Remote', mime_type: 'text/plain' });
      expect(up.status).toBe(200);
      docId = up.body.data.id as string;
    } finally {
      await first.close();
    }
    const second = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN, dbPath });
    try {
      await drainIngestion(second);
      const doc = await second.request('GET', `${API}/knowledge-bases/${IDS.policies}/documents/${docId}`, { token: KEYS.kbRead });
      expect(doc.body.data).toMatchObject({ status: 'ready', chunk_count: 1 });
      const list = await second.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead });
      expect(list.body.data.items.filter((k: { id: string }) => k.id === IDS.handbook)).toHaveLength(1);
      const handbook = list.body.data.items.find((k: { id: string }) => k.id === IDS.handbook);
      expect(handbook.document_count).toBe(3);
      const hit = await second.request('POST', `${API}/knowledge-bases/${IDS.policies}/retrieve`, { token: KEYS.kbRead, body: { query: 'remote work' } });
      expect(hit.body.data.chunks[0].document_id).toBe(docId);
      const refund = await second.request('POST', `${API}/knowledge-bases/${IDS.handbook}/retrieve`, { token: KEYS.kbRead, body: { query: 'refund payment card', top_k: 50, threshold: 0 } });
      // Seeded chunks were not indexed twice.
      const ids = refund.body.data.chunks.map((c: { content: string }) => c.content);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await second.close();
    }
  });
});

describe('config/seed.example.yaml', () => {
  it('seeds a searchable KB, a private KB, an agent with its KBs, memories and the EMP registry', async () => {
    const example = await startTestEmulator(readFileSync(new URL('../../../../config/seed.example.yaml', import.meta.url), 'utf8'));
    const key = 'ek_acmekb_0123456789abcdef';
    try {
      const kbs = await example.request('GET', `${API}/knowledge-bases`, { token: key });
      expect(kbs.body.data.items.map((k: { name: string }) => k.name)).toEqual(['Handbook']);
      const hit = await example.request('POST', `${API}/knowledge-bases/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/retrieve`, { token: key, body: { query: 'refund' } });
      expect(hit.body.data.chunks[0].content).toContain('refund within 30 days');
      const card = await example.request('POST', `${API}/chat/messages`, {
        token: key,
        body: { target: { type: 'agent_conversation', user_id: 'ffffffff-0000-4000-8000-000000000000', agent_id: '5b0e7a52-3c1e-4c51-9a0e-2f3d4a5b6c71' }, message: { blocks: [{ type: 'card', title: 'x' }] } },
      });
      expect(card.status).toBe(400);
      expect(card.body.message).toMatch(/card is beta/);
      const memories = await example.request('GET', `${API}/memories?user_id=ada-account-id&agent_id=5b0e7a52-3c1e-4c51-9a0e-2f3d4a5b6c71&session_id=s`, { token: key });
      expect(memories.body.data.items.map((m: { content: string }) => m.content)).toEqual(['Ada prefers answers in English.']);
    } finally {
      await example.close();
    }
  });
});
