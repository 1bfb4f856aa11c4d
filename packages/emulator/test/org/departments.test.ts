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

async function root(): Promise<{ id: string; path: string }> {
  const res = await emu.request('GET', `${O}/departments`, { token: K });
  return res.body.items.find((d: { depth: number }) => d.depth === 0);
}
async function createDept(body: Record<string, unknown>) {
  const res = await emu.request('POST', `${O}/departments`, { token: K, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
async function getDept(id: string) {
  return (await emu.request('GET', `${O}/departments/${id}`, { token: K })).body;
}

describe('departments', () => {
  test('every tenant has a root department: depth 0, parent_id "", named after the tenant, path /Name', async () => {
    const r = await root();
    expect(r).toMatchObject({ parent_id: '', name: 'Acme', path: '/Acme', depth: 0, third_department_id: '', status: 'active', member_count: 0 });
  });

  test('POST creates under the root when parent_id is absent, with the defaults, and answers 201', async () => {
    const r = await root();
    const d = await createDept({ name: 'Engineering' });
    expect(d).toMatchObject({ parent_id: r.id, name: 'Engineering', path: '/Acme/Engineering', depth: 1, sort_order: 0, third_department_id: '', member_count: 0, metadata: {}, status: 'active' });
    expect(d.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Object.keys(d).sort()).toEqual(['depth', 'id', 'member_count', 'metadata', 'name', 'parent_id', 'path', 'sort_order', 'status', 'third_department_id', 'updated_at']);
  });

  test('POST with parent_id "" also means under the root', async () => {
    const r = await root();
    expect((await createDept({ name: 'Sales', parent_id: '' })).parent_id).toBe(r.id);
  });

  test('POST stores sort_order, third_department_id and metadata', async () => {
    const d = await createDept({ name: 'Ops', sort_order: 7, third_department_id: 'HR-7', metadata: { managed_by: 'sync-1' } });
    expect(d).toMatchObject({ sort_order: 7, third_department_id: 'HR-7', metadata: { managed_by: 'sync-1' } });
    expect(await getDept(d.id)).toEqual(d);
  });

  test('POST without a name is 400 invalid_argument naming the field', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: K, body: { sort_order: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_argument');
    expect(res.body.error.message).toContain('name');
    expect(res.body.meta.request_id).toEqual(expect.any(String));
  });

  test('POST with a property the spec does not list is 400 "unknown property"', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'X', colour: 'red' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_argument', message: 'unknown property: colour' });
  });

  test('PATCH with a property the spec does not list is 400', async () => {
    const d = await createDept({ name: 'X' });
    const res = await emu.request('PATCH', `${O}/departments/${d.id}`, { token: K, body: { status: 'deleted' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unknown property: status');
  });

  test('a wrongly typed field is 400 naming it', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'X', sort_order: 'first' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^sort_order: /);
  });

  test('POST with an unknown parent is 400', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'X', parent_id: '00000000-0000-4000-8000-000000000000' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^parent_id: /);
  });

  test('a third_department_id collision among live departments is 409 third_id_conflict (POST and PATCH)', async () => {
    await createDept({ name: 'A', third_department_id: 'D1' });
    const b = await createDept({ name: 'B', third_department_id: 'D2' });
    const post = await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'C', third_department_id: 'D1' } });
    expect(post.status).toBe(409);
    expect(post.body.error.code).toBe('third_id_conflict');
    const patch = await emu.request('PATCH', `${O}/departments/${b.id}`, { token: K, body: { third_department_id: 'D1' } });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe('third_id_conflict');
  });

  test('an empty third_department_id never collides', async () => {
    await createDept({ name: 'A', third_department_id: '' });
    await createDept({ name: 'B', third_department_id: '' });
  });

  test('a deleted department keeps its third id but does not block a new one with it', async () => {
    const a = await createDept({ name: 'A', third_department_id: 'D1' });
    expect((await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K })).status).toBe(204);
    const b = await createDept({ name: 'B', third_department_id: 'D1' });
    expect(b.third_department_id).toBe('D1');
    const changes = await emu.request('GET', `${O}/departments?updated_since=2000-01-01T00:00:00Z&limit=200`, { token: K });
    expect(changes.body.items.find((d: { id: string }) => d.id === a.id)).toMatchObject({ status: 'deleted', third_department_id: 'D1' });
  });

  test('PATCH renames and moves; path and depth follow, and descendants are rewritten with a new updated_at', async () => {
    const eng = await createDept({ name: 'Engineering' });
    const plat = await createDept({ name: 'Platform', parent_id: eng.id });
    const db = await createDept({ name: 'Databases', parent_id: plat.id });
    const sales = await createDept({ name: 'Sales' });
    expect(db.path).toBe('/Acme/Engineering/Platform/Databases');
    expect(db.depth).toBe(3);

    const renamed = await emu.request('PATCH', `${O}/departments/${eng.id}`, { token: K, body: { name: 'R&D' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.path).toBe('/Acme/R&D');
    expect((await getDept(plat.id)).path).toBe('/Acme/R&D/Platform');
    const dbAfterRename = await getDept(db.id);
    expect(dbAfterRename.path).toBe('/Acme/R&D/Platform/Databases');

    const moved = await emu.request('PATCH', `${O}/departments/${plat.id}`, { token: K, body: { parent_id: sales.id } });
    expect(moved.body).toMatchObject({ parent_id: sales.id, path: '/Acme/Sales/Platform', depth: 2 });
    expect(await getDept(db.id)).toMatchObject({ path: '/Acme/Sales/Platform/Databases', depth: 3 });

    const up = await emu.request('PATCH', `${O}/departments/${db.id}`, { token: K, body: { parent_id: '' } });
    expect(up.body).toMatchObject({ path: '/Acme/Databases', depth: 1 });
  });

  test('a descendant rewritten by an ancestor move shows up again in the updated_since list', async () => {
    const a = await createDept({ name: 'A' });
    const b = await createDept({ name: 'B' });
    const child = await createDept({ name: 'C', parent_id: a.id });
    const first = await emu.request('GET', `${O}/departments?updated_since=2000-01-01T00:00:00Z&limit=200`, { token: K });
    const cursorEnd = first.body.items.length;
    await emu.request('PATCH', `${O}/departments/${a.id}`, { token: K, body: { parent_id: b.id } });
    const after = await emu.request('GET', `${O}/departments?updated_since=2000-01-01T00:00:00Z&limit=200`, { token: K });
    const ids = after.body.items.map((d: { id: string }) => d.id);
    // Ordered by rev: the moved department and its child are now last.
    expect(ids.slice(-2)).toEqual([a.id, child.id]);
    expect(after.body.items.at(-1)).toMatchObject({ path: '/Acme/B/A/C', depth: 3 });
    expect(cursorEnd).toBe(4);
  });

  test('a move into its own subtree is 409 department_cycle', async () => {
    const a = await createDept({ name: 'A' });
    const b = await createDept({ name: 'B', parent_id: a.id });
    const c = await createDept({ name: 'C', parent_id: b.id });
    const res = await emu.request('PATCH', `${O}/departments/${a.id}`, { token: K, body: { parent_id: c.id } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_cycle');
    expect((await getDept(a.id)).path).toBe('/Acme/A');
  });

  test('a move under itself is 409 department_cycle', async () => {
    const a = await createDept({ name: 'A' });
    const res = await emu.request('PATCH', `${O}/departments/${a.id}`, { token: K, body: { parent_id: a.id } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_cycle');
  });

  test('moving the root is 409 department_is_root', async () => {
    const r = await root();
    const a = await createDept({ name: 'A' });
    const res = await emu.request('PATCH', `${O}/departments/${r.id}`, { token: K, body: { parent_id: a.id } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_is_root');
  });

  test('deleting the root is 409 department_is_root', async () => {
    const r = await root();
    const res = await emu.request('DELETE', `${O}/departments/${r.id}`, { token: K });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_is_root');
  });

  test('deleting a department with children is 409 department_has_children', async () => {
    const a = await createDept({ name: 'A' });
    await createDept({ name: 'B', parent_id: a.id });
    const res = await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_has_children');
  });

  test('deleting a department with members is 409 department_has_members; after the member leaves it is 204', async () => {
    const a = await createDept({ name: 'A' });
    const m = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'm@acme.test', department_id: a.id } });
    const res = await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('department_has_members');
    expect((await emu.request('DELETE', `${O}/members/${m.body.account_id}`, { token: K })).status).toBe(204);
    expect((await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K })).status).toBe(204);
  });

  test('DELETE is a soft delete: 204, then 404 by id, gone from the live list, a tombstone with updated_since', async () => {
    const a = await createDept({ name: 'A' });
    const del = await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expect((await emu.request('GET', `${O}/departments/${a.id}`, { token: K })).status).toBe(404);
    expect((await emu.request('PATCH', `${O}/departments/${a.id}`, { token: K, body: { name: 'Z' } })).status).toBe(404);
    expect((await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K })).status).toBe(404);
    const live = await emu.request('GET', `${O}/departments`, { token: K });
    expect(live.body.items.map((d: { id: string }) => d.id)).not.toContain(a.id);
    const inc = await emu.request('GET', `${O}/departments?updated_since=2000-01-01T00:00:00Z`, { token: K });
    expect(inc.body.items.find((d: { id: string }) => d.id === a.id)).toMatchObject({ status: 'deleted', name: 'A' });
  });

  test('a deleted department cannot be a parent', async () => {
    const a = await createDept({ name: 'A' });
    await emu.request('DELETE', `${O}/departments/${a.id}`, { token: K });
    const res = await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'B', parent_id: a.id } });
    expect(res.status).toBe(400);
  });

  test('GET, PATCH and DELETE of an unknown id are 404 not_found in shape 2', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await emu.request(method, `${O}/departments/00000000-0000-4000-8000-000000000000`, { token: K, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) }, meta: { request_id: expect.any(String) } });
    }
  });

  test('member_count counts members directly in the department (not left), through moves and deletes', async () => {
    const a = await createDept({ name: 'A' });
    const b = await createDept({ name: 'B', parent_id: a.id });
    const m1 = (await emu.request('POST', `${O}/members`, { token: K, body: { email: '1@acme.test', department_id: a.id } })).body;
    await emu.request('POST', `${O}/members`, { token: K, body: { email: '2@acme.test', department_id: a.id } });
    expect((await getDept(a.id)).member_count).toBe(2);
    expect((await getDept(b.id)).member_count).toBe(0);
    await emu.request('PATCH', `${O}/members/${m1.account_id}`, { token: K, body: { department_id: b.id } });
    expect((await getDept(a.id)).member_count).toBe(1);
    expect((await getDept(b.id)).member_count).toBe(1);
    await emu.request('PATCH', `${O}/members/${m1.account_id}`, { token: K, body: { status: 'suspended' } });
    expect((await getDept(b.id)).member_count).toBe(1);
    await emu.request('DELETE', `${O}/members/${m1.account_id}`, { token: K });
    expect((await getDept(b.id)).member_count).toBe(0);
    await emu.request('POST', `${O}/members`, { token: K, body: { email: '1@acme.test', department_id: b.id } });
    expect((await getDept(b.id)).member_count).toBe(1);
    // Moving the department moves nothing of its count.
    await emu.request('PATCH', `${O}/departments/${b.id}`, { token: K, body: { parent_id: '' } });
    expect((await getDept(b.id)).member_count).toBe(1);
  });

  test('PATCH metadata replaces it; PATCH sort_order updates it; updated_at moves', async () => {
    const a = await createDept({ name: 'A', metadata: { x: 1 } });
    const res = await emu.request('PATCH', `${O}/departments/${a.id}`, { token: K, body: { metadata: { y: 2 }, sort_order: 3 } });
    expect(res.body).toMatchObject({ metadata: { y: 2 }, sort_order: 3 });
    expect(res.body.updated_at >= a.updated_at).toBe(true);
  });
});
