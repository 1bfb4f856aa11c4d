import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
const K = TEST_KEYS.acmeRw;
let emu: TestEmulator;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  emu = await startTestEmulator(orgTestSeed(), { clock });
});
afterEach(async () => {
  await emu.close();
});

async function seedPositions(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await emu.request('POST', `${O}/positions`, { token: K, body: { name: `P${i}` } })).body.id);
  return ids;
}

describe('list pagination', () => {
  test('limit defaults to 50; has_more and next_cursor lead to the rest; at the end next_cursor is "" and has_more false', async () => {
    const ids = await seedPositions(120);
    const first = await emu.request('GET', `${O}/positions`, { token: K });
    expect(first.body.items).toHaveLength(50);
    expect(first.body.has_more).toBe(true);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(first.body.next_cursor).not.toBe('');
    const seen = first.body.items.map((p: { id: string }) => p.id);
    let cursor = first.body.next_cursor as string;
    for (;;) {
      const page = await emu.request('GET', `${O}/positions?cursor=${encodeURIComponent(cursor)}`, { token: K });
      seen.push(...page.body.items.map((p: { id: string }) => p.id));
      if (!page.body.has_more) {
        expect(page.body.next_cursor).toBe('');
        break;
      }
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(ids);
  });

  test('limit 200 is accepted; above 200 is 400 invalid_argument naming limit', async () => {
    await seedPositions(3);
    const ok = await emu.request('GET', `${O}/positions?limit=200`, { token: K });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ items: expect.any(Array), next_cursor: '', has_more: false });
    const res = await emu.request('GET', `${O}/members?limit=201`, { token: K });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_argument', message: 'limit: must be at most 200' });
  });

  test('limit 0, a negative or a non-integer limit is 400', async () => {
    for (const l of ['0', '-1', 'abc', '1.5']) {
      expect((await emu.request('GET', `${O}/departments?limit=${l}`, { token: K })).status).toBe(400);
    }
  });

  test('a malformed cursor or updated_since is 400', async () => {
    expect((await emu.request('GET', `${O}/departments?cursor=garbage`, { token: K })).status).toBe(400);
    expect((await emu.request('GET', `${O}/departments?updated_since=yesterday`, { token: K })).status).toBe(400);
  });

  test('a cursor of one list is refused by another', async () => {
    await seedPositions(3);
    const page = await emu.request('GET', `${O}/positions?limit=1`, { token: K });
    const res = await emu.request('GET', `${O}/departments?cursor=${page.body.next_cursor}`, { token: K });
    expect(res.status).toBe(400);
  });

  test('updated_since returns only records changed at or after it, ordered by change, tombstones included', async () => {
    const [a, b] = await seedPositions(2);
    clock.set(Date.UTC(2026, 10, 22, 13, 0, 0));
    await emu.request('PATCH', `${O}/positions/${a}`, { token: K, body: { name: 'A2' } });
    await emu.request('DELETE', `${O}/positions/${b}`, { token: K });
    const res = await emu.request('GET', `${O}/positions?updated_since=2026-11-22T12:30:00Z`, { token: K });
    expect(res.body.items.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([[a, 'active'], [b, 'deleted']]);
    expect(res.body.items[0].updated_at).toBe('2026-11-22T13:00:00.000Z');
    const offset = await emu.request('GET', `${O}/positions?updated_since=${encodeURIComponent('2026-11-22T14:00:00+01:00')}`, { token: K });
    expect(offset.body.items).toHaveLength(2);
    const later = await emu.request('GET', `${O}/positions?updated_since=2026-11-22T13:00:00.001Z`, { token: K });
    expect(later.body.items).toEqual([]);
  });

  test('incremental walk: a record changed during the walk appears again later with its newest state', async () => {
    const ids = await seedPositions(5);
    const p1 = await emu.request('GET', `${O}/positions?updated_since=2000-01-01T00:00:00Z&limit=3`, { token: K });
    expect(p1.body.items.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 3));
    await emu.request('PATCH', `${O}/positions/${ids[0]}`, { token: K, body: { name: 'changed' } });
    const p2 = await emu.request('GET', `${O}/positions?cursor=${p1.body.next_cursor}&limit=3`, { token: K });
    expect(p2.body.items.map((p: { id: string }) => p.id)).toEqual([ids[3], ids[4], ids[0]]);
    expect(p2.body.items[2].name).toBe('changed');
    expect(p2.body.has_more).toBe(false);
  });

  test('a full walk while a second client creates, updates, moves and deletes returns every record that stayed live exactly once', async () => {
    const depts: string[] = [];
    for (let i = 0; i < 60; i++) depts.push((await emu.request('POST', `${O}/departments`, { token: K, body: { name: `D${i}` } })).body.id);
    const members: string[] = [];
    for (let i = 0; i < 150; i++) {
      members.push((await emu.request('POST', `${O}/members`, { token: K, body: { email: `m${i}@acme.test`, department_id: depts[i % 60] } })).body.account_id);
    }
    const removed = new Set<string>();
    const walked: { departments: string[]; members: string[] } = { departments: [], members: [] };
    let step = 0;
    // Walk departments and members with small pages; between pages the other client mutates.
    for (const kind of ['departments', 'members'] as const) {
      let cursor = '';
      for (;;) {
        const page = await emu.request('GET', `${O}/${kind}?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: TEST_KEYS.acmeRead });
        expect(page.status).toBe(200);
        walked[kind].push(...page.body.items.map((r: { id?: string; account_id?: string }) => r.id ?? r.account_id));
        step += 1;
        // The second client: rename and move an early department, patch and move early members, create new ones, delete one.
        const d = depts[step % 50]!;
        await emu.request('PATCH', `${O}/departments/${d}`, { token: K, body: { name: `D-renamed-${step}`, parent_id: depts[(step + 1) % 50] === d ? '' : depts[59] } });
        const m = members[step % 100]!;
        await emu.request('PATCH', `${O}/members/${m}`, { token: K, body: { title: `t${step}`, department_id: depts[(step * 7) % 60] } });
        await emu.request('POST', `${O}/departments`, { token: K, body: { name: `new${step}` } });
        await emu.request('POST', `${O}/members`, { token: K, body: { email: `new${step}@acme.test` } });
        const victim = members[100 + (step % 50)]!;
        if (!removed.has(victim) && (await emu.request('DELETE', `${O}/members/${victim}`, { token: K })).status === 204) removed.add(victim);
        if (!page.body.has_more) break;
        cursor = page.body.next_cursor;
      }
    }
    for (const kind of ['departments', 'members'] as const) {
      expect(new Set(walked[kind]).size, `${kind} doubled`).toBe(walked[kind].length);
    }
    for (const d of depts) expect(walked.departments).toContain(d);
    for (const m of members) if (!removed.has(m)) expect(walked.members).toContain(m);
    expect(removed.size).toBeGreaterThan(0);
  });

  test('list items are exactly the records GET by id returns (metadata, unicode, numbers, booleans, timestamps)', async () => {
    clock.set(Date.UTC(2026, 10, 22, 12, 0, 0, 7));
    const d = (await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'Forschung & Entwicklung "R&D" ü', sort_order: -3, third_department_id: 'D\\1', metadata: { managed_by: 'sync-1', nested: { a: [1, 2.5, null, true] } } } })).body;
    const p = (await emu.request('POST', `${O}/positions`, { token: K, body: { name: '工程师', description: 'line\nbreak', metadata: { x: 'y' } } })).body;
    const m = (await emu.request('POST', `${O}/members`, { token: K, body: { email: 'zoë@acme.test', display_name: 'Zoë', department_id: d.id, title: 'Ingénieur' } })).body;
    const byId = async (kind: string, id: string) => (await emu.request('GET', `${O}/${kind}/${id}`, { token: K })).body;
    const listed = async (kind: string) => (await emu.request('GET', `${O}/${kind}?limit=200`, { token: K })).body.items as { id?: string; account_id?: string }[];
    expect((await listed('departments')).find((x) => x.id === d.id)).toEqual(await byId('departments', d.id));
    expect((await listed('positions')).find((x) => x.id === p.id)).toEqual(await byId('positions', p.id));
    expect((await listed('members')).find((x) => x.account_id === m.account_id)).toEqual(await byId('members', m.account_id));
    expect(await byId('positions', p.id)).toMatchObject({ updated_at: '2026-11-22T12:00:00.007Z', is_system: false });
  });
});
