import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
const K = TEST_KEYS.acmeRw;
let emu: TestEmulator;

beforeEach(async () => {
  emu = await startTestEmulator(orgTestSeed());
});
afterEach(async () => {
  await emu.close();
});

async function createPosition(body: Record<string, unknown>) {
  const res = await emu.request('POST', `${O}/positions`, { token: K, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('positions', () => {
  test('POST creates with the defaults: 201, is_system false, member_count and agent_count 0', async () => {
    const p = await createPosition({ name: 'Engineer' });
    expect(p).toMatchObject({ name: 'Engineer', description: '', sort_order: 0, third_position_id: '', is_system: false, member_count: 0, agent_count: 0, metadata: {}, status: 'active' });
    expect(Object.keys(p).sort()).toEqual(['agent_count', 'description', 'id', 'is_system', 'member_count', 'metadata', 'name', 'sort_order', 'status', 'third_position_id', 'updated_at']);
    expect((await emu.request('GET', `${O}/positions/${p.id}`, { token: K })).body).toEqual(p);
  });

  test('POST without a name is 400; an unknown property is 400', async () => {
    expect((await emu.request('POST', `${O}/positions`, { token: K, body: { description: 'x' } })).status).toBe(400);
    const res = await emu.request('POST', `${O}/positions`, { token: K, body: { name: 'x', is_system: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unknown property: is_system');
  });

  test('PATCH updates name, description, sort_order, third_position_id, metadata', async () => {
    const p = await createPosition({ name: 'Engineer' });
    const res = await emu.request('PATCH', `${O}/positions/${p.id}`, { token: K, body: { name: 'Senior', description: 'd', sort_order: 2, third_position_id: 'P9', metadata: { a: 1 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Senior', description: 'd', sort_order: 2, third_position_id: 'P9', metadata: { a: 1 } });
  });

  test('a third_position_id collision is 409 third_id_conflict (POST and PATCH)', async () => {
    await createPosition({ name: 'A', third_position_id: 'P1' });
    const b = await createPosition({ name: 'B' });
    const post = await emu.request('POST', `${O}/positions`, { token: K, body: { name: 'C', third_position_id: 'P1' } });
    expect(post.status).toBe(409);
    expect(post.body.error.code).toBe('third_id_conflict');
    const patch = await emu.request('PATCH', `${O}/positions/${b.id}`, { token: K, body: { third_position_id: 'P1' } });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe('third_id_conflict');
  });

  test('DELETE is a soft delete: 204, 404 by id, a tombstone with updated_since; its third id is free again', async () => {
    const p = await createPosition({ name: 'A', third_position_id: 'P1' });
    expect((await emu.request('DELETE', `${O}/positions/${p.id}`, { token: K })).status).toBe(204);
    expect((await emu.request('GET', `${O}/positions/${p.id}`, { token: K })).status).toBe(404);
    expect((await emu.request('DELETE', `${O}/positions/${p.id}`, { token: K })).status).toBe(404);
    expect((await emu.request('GET', `${O}/positions`, { token: K })).body.items).toEqual([]);
    const inc = await emu.request('GET', `${O}/positions?updated_since=2000-01-01T00:00:00Z`, { token: K });
    expect(inc.body.items).toEqual([expect.objectContaining({ id: p.id, status: 'deleted', third_position_id: 'P1' })]);
    await createPosition({ name: 'B', third_position_id: 'P1' });
  });

  test('GET/PATCH/DELETE of an unknown id is 404', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect((await emu.request('GET', `${O}/positions/${id}`, { token: K })).status).toBe(404);
    expect((await emu.request('PATCH', `${O}/positions/${id}`, { token: K, body: { name: 'x' } })).status).toBe(404);
    expect((await emu.request('DELETE', `${O}/positions/${id}`, { token: K })).status).toBe(404);
  });
});
