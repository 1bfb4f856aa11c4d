import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadSeedFile } from '../../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'orgsync-seed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function seedFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
function failure(path: string): string {
  try {
    loadSeedFile(path);
  } catch (err) {
    const e = err as { message: string; code: string; exitCode: number };
    expect(e.code).toBe('SEED_INVALID');
    expect(e.exitCode).toBe(2);
    expect(e.message).not.toContain('\n');
    return e.message;
  }
  throw new Error('expected the seed to be refused');
}

const good = `tenants:
  - id: 1001
    name: Acme
    api_keys:
      - key: ek_acme_0123456789abcdef
        scopes: [tenant.org.read, tenant.org.write]
    members:
      - display_name: Ada Admin
        email: ada@acme.test
        phone: "+15550100"
        roles: [tenant.admin]
limits:
  per_api_key: 100
  per_session_token: 50
  per_tenant: 500
`;

describe('seed files', () => {
  test('the issue example loads, with defaults filled in', () => {
    const seed = loadSeedFile(seedFile('good.yaml', good));
    expect(seed.tenants[0]).toMatchObject({ id: 1001, name: 'Acme', members: [{ roles: ['tenant.admin'] }] });
    expect(seed.limits).toMatchObject({ per_api_key: 100, per_session_token: 50, per_tenant: 500 });
  });

  test('the committed example seed loads', () => {
    expect(loadSeedFile(fileURLToPath(new URL('../../../../config/seed.example.yaml', import.meta.url))).tenants.length).toBeGreaterThan(0);
  });

  test('JSON is accepted', () => {
    const seed = loadSeedFile(seedFile('good.json', JSON.stringify({ tenants: [{ id: 7, name: 'J' }] })));
    expect(seed.tenants[0]).toMatchObject({ id: 7, api_keys: [], members: [] });
  });

  test('a malformed API key names the file and the path', () => {
    const path = seedFile('seed.yaml', good.replace('ek_acme_0123456789abcdef', 'sk_live_123'));
    expect(failure(path)).toBe(`${path}: tenants[0].api_keys[0].key: an API key has the form ek_<prefix>_<secret>`);
  });

  test('an unknown key names its path', () => {
    const path = seedFile('unknown.yaml', good.replace('    name: Acme', '    name: Acme\n    colour: red'));
    expect(failure(path)).toBe(`${path}: tenants[0].colour: unknown key`);
  });

  test('a wrong type names its path', () => {
    const path = seedFile('type.yaml', good.replace('id: 1001', 'id: "acme"'));
    expect(failure(path)).toMatch(new RegExp(`^${path.replace(/[.]/g, '\\.')}: tenants\\[0\\]\\.id: `));
  });

  test('a negative limit names its path', () => {
    const path = seedFile('limit.yaml', good.replace('per_tenant: 500', 'per_tenant: -1'));
    expect(failure(path)).toMatch(/: limits\.per_tenant: /);
  });

  test('duplicate tenant ids and keys are refused', () => {
    const twice = `tenants:\n  - {id: 1, name: A}\n  - {id: 1, name: B}\n`;
    expect(failure(seedFile('dup.yaml', twice))).toMatch(/: tenants\[1\]\.id: duplicate tenant id 1$/);
    const keys = `tenants:\n  - {id: 1, name: A, api_keys: [{key: ek_a_1}]}\n  - {id: 2, name: B, api_keys: [{key: ek_a_1}]}\n`;
    expect(failure(seedFile('dupkey.yaml', keys))).toMatch(/: tenants\[1\]\.api_keys\[0\]\.key: duplicate API key$/);
  });

  test('a member without email or phone is refused', () => {
    expect(failure(seedFile('contact.yaml', `tenants:\n  - {id: 1, name: A, members: [{display_name: X}]}\n`))).toMatch(/tenants\[0\]\.members\[0\]: needs an email or a phone$/);
  });

  test('YAML syntax errors give the file, line and column', () => {
    expect(failure(seedFile('syntax.yaml', 'tenants:\n  - id: [1\n'))).toMatch(/syntax\.yaml:\d+:\d+: not valid YAML or JSON: /);
  });

  test('a missing file is one line', () => {
    expect(failure(join(dir, 'absent.yaml'))).toMatch(/absent\.yaml: cannot read the seed file \(ENOENT\)$/);
  });
});
