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

async function createMember(body: Record<string, unknown>, token: string = K) {
  const res = await emu.request('POST', `${O}/members`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
async function allMembers(query = '') {
  return (await emu.request('GET', `${O}/members?limit=200${query}`, { token: K })).body.items as { account_id: string; status: string; email: string }[];
}

describe('members', () => {
  test('the seeded member is listed with the seed fields, status active, roles from the seed', async () => {
    const items = await allMembers();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ display_name: 'Ada Admin', email: 'ada@acme.test', phone: '+15550100', status: 'active', roles: ['tenant.admin'], department_id: '' });
  });

  test('POST creates a member: 201, status active, role tenant.member, every field of the spec', async () => {
    const dept = (await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'Eng' } })).body;
    const m = await createMember({ email: 'bo@acme.test', phone: '+15550111', display_name: 'Bo', title: 'Engineer', third_user_id: 'E1', department_id: dept.id, role_code: 'tenant.member' });
    expect(m).toMatchObject({ email: 'bo@acme.test', phone: '+15550111', display_name: 'Bo', title: 'Engineer', third_user_id: 'E1', department_id: dept.id, status: 'active', roles: ['tenant.member'] });
    expect(Object.keys(m).sort()).toEqual(['account_id', 'department_id', 'display_name', 'email', 'phone', 'roles', 'status', 'third_user_id', 'title', 'updated_at']);
    expect((await emu.request('GET', `${O}/members/${m.account_id}`, { token: K })).body).toEqual(m);
  });

  test('POST without department_id gives a member without a department ("")', async () => {
    expect((await createMember({ email: 'x@acme.test' })).department_id).toBe('');
  });

  test('POST without phone and email is 400', async () => {
    const res = await emu.request('POST', `${O}/members`, { token: K, body: { display_name: 'Nobody' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_argument');
  });

  test('role_code other than tenant.member is 400', async () => {
    const res = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'x@acme.test', role_code: 'tenant.admin' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^role_code: /);
  });

  test('a property the spec does not list is 400 on POST and PATCH (email and phone cannot be patched)', async () => {
    const post = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'x@acme.test', roles: ['tenant.admin'] } });
    expect(post.status).toBe(400);
    expect(post.body.error.message).toBe('unknown property: roles');
    const m = await createMember({ email: 'y@acme.test' });
    for (const field of ['email', 'phone']) {
      const res = await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { [field]: 'new' } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`unknown property: ${field}`);
    }
  });

  test('adding an account that is already a member is 409 member_exists (found by e-mail, case-insensitive)', async () => {
    const res = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'ADA@acme.test', display_name: 'Ada again' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('member_exists');
  });

  test('adding an account that is already a member is 409 member_exists (found by phone)', async () => {
    const res = await emu.request('POST', `${O}/members`, { token: K, body: { phone: '+1 555 0100', email: 'other@acme.test' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('member_exists');
  });

  test('a suspended member is still a member: POST again is 409', async () => {
    const m = await createMember({ email: 's@acme.test' });
    await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { status: 'suspended' } });
    const res = await emu.request('POST', `${O}/members`, { token: K, body: { email: 's@acme.test' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('member_exists');
  });

  test('creating a member finds an existing account of another tenant by phone first, then e-mail, and adds it', async () => {
    const inGlobex = await createMember({ phone: '+15550199', email: 'zed@globex.test', display_name: 'Zed' }, TEST_KEYS.globexRw);
    const byPhone = await createMember({ phone: '+15550199', email: 'zed@acme.test', display_name: 'Zed' });
    expect(byPhone.account_id).toBe(inGlobex.account_id);
    const other = await createMember({ email: 'yan@globex.test' }, TEST_KEYS.globexRw);
    const byEmail = await createMember({ email: 'yan@globex.test' });
    expect(byEmail.account_id).toBe(other.account_id);
    const fresh = await createMember({ email: 'new@acme.test' });
    expect([inGlobex.account_id, other.account_id]).not.toContain(fresh.account_id);
  });

  test('phone is matched before e-mail when they point at different accounts', async () => {
    const a = await createMember({ phone: '+15550001', email: 'a@globex.test' }, TEST_KEYS.globexRw);
    await createMember({ phone: '+15550002', email: 'b@globex.test' }, TEST_KEYS.globexRw);
    const m = await createMember({ phone: '+15550001', email: 'b@globex.test' });
    expect(m.account_id).toBe(a.account_id);
  });

  test('DELETE is a soft delete to left: 204, then 404 by id, gone from the list, tombstone with updated_since', async () => {
    const m = await createMember({ email: 'l@acme.test' });
    expect((await emu.request('DELETE', `${O}/members/${m.account_id}`, { token: K })).status).toBe(204);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await emu.request(method, `${O}/members/${m.account_id}`, { token: K, ...(method === 'PATCH' ? { body: { title: 'x' } } : {}) });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await allMembers()).map((x) => x.account_id)).not.toContain(m.account_id);
    const tomb = (await allMembers('&updated_since=2000-01-01T00:00:00.000Z')).find((x) => x.account_id === m.account_id);
    expect(tomb).toMatchObject({ status: 'left', email: 'l@acme.test' });
  });

  test('DELETE of a tenant.admin member is 403 member_is_admin and changes nothing', async () => {
    const ada = (await allMembers())[0]!;
    const res = await emu.request('DELETE', `${O}/members/${ada.account_id}`, { token: K });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('member_is_admin');
    expect((await emu.request('GET', `${O}/members/${ada.account_id}`, { token: K })).body.status).toBe('active');
  });

  test('re-hire: POST for a left member re-activates the same account_id with the posted fields (201)', async () => {
    const m = await createMember({ email: 'r@acme.test', display_name: 'Old', third_user_id: 'R1', title: 'Dev' });
    await emu.request('DELETE', `${O}/members/${m.account_id}`, { token: K });
    const again = await createMember({ email: 'r@acme.test', display_name: 'New', third_user_id: 'R2' });
    expect(again).toMatchObject({ account_id: m.account_id, display_name: 'New', third_user_id: 'R2', title: '', status: 'active' });
    expect((await allMembers()).filter((x) => x.account_id === m.account_id)).toHaveLength(1);
  });

  test('PATCH updates display_name, title, third_user_id, department_id, status', async () => {
    const d = (await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'Eng' } })).body;
    const m = await createMember({ email: 'p@acme.test', department_id: d.id });
    const res = await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { display_name: 'P', title: 'Lead', third_user_id: 'P1', department_id: '', status: 'suspended' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ display_name: 'P', title: 'Lead', third_user_id: 'P1', department_id: '', status: 'suspended', email: 'p@acme.test' });
    const back = await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { status: 'active' } });
    expect(back.body.status).toBe('active');
  });

  test('PATCH status accepts only active and suspended', async () => {
    const m = await createMember({ email: 'q@acme.test' });
    for (const status of ['left', 'invited', 'gone']) {
      const res = await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { status } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/^status: /);
    }
  });

  test('PATCH to an unknown department is 400', async () => {
    const m = await createMember({ email: 'q@acme.test' });
    const res = await emu.request('PATCH', `${O}/members/${m.account_id}`, { token: K, body: { department_id: '00000000-0000-4000-8000-000000000000' } });
    expect(res.status).toBe(400);
  });

  test('a third_user_id collision among live members is 409 third_id_conflict; a left member does not block it', async () => {
    const a = await createMember({ email: 'a@acme.test', third_user_id: 'U1' });
    const b = await createMember({ email: 'b@acme.test', third_user_id: 'U2' });
    const post = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'c@acme.test', third_user_id: 'U1' } });
    expect(post.status).toBe(409);
    expect(post.body.error.code).toBe('third_id_conflict');
    const patch = await emu.request('PATCH', `${O}/members/${b.account_id}`, { token: K, body: { third_user_id: 'U1' } });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe('third_id_conflict');
    await emu.request('DELETE', `${O}/members/${a.account_id}`, { token: K });
    expect((await emu.request('POST', `${O}/members`, { token: K, body: { email: 'c@acme.test', third_user_id: 'U1' } })).status).toBe(201);
  });

  test('an empty third_user_id never collides', async () => {
    await createMember({ email: 'a@acme.test', third_user_id: '' });
    await createMember({ email: 'b@acme.test', third_user_id: '' });
  });
});
