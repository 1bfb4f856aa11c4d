/**
 * Issue 44 points 4 and 5 through the CLI: no credential crosses a network in clear by default (an LDAP bind over
 * ldap:// without start_tls, an http:// platform, an http:// HR source with a token, each to a host other than
 * loopback), each refusal naming the secure setting and the lab opt-out; `allow_insecure_transport: true` lets it
 * through, loudly; URLs are http(s) only; user-info is never printed; a secret of two lines or with a control
 * character is refused at load, naming its key, in every command and at once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const KEY = 'ek_acme_0123456789abcdef';

/** Writes `text` as orgsync.yaml (with the CSV it may name) in a new folder; returns its path. */
function configFile(text: string, files: Record<string, string> = {}): string {
  const dir = tempDir('orgsync-transport-');
  writeFileSync(join(dir, 'm.csv'), 'id,name,email\nu1,Ann Lee,ann@acme.test\n');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(file, text);
  return file;
}

const platform = (url: string, extra = '') => `platform:\n  base_url: ${url}\n  api_key: ${KEY}\n${extra}state:\n  path: ./state.db\nsync:\n  id: t\nlog:\n  level: warn\n  format: json\n`;
const ldap = (url: string, extra = '') =>
  `sources:\n  - name: dir\n    type: ldap\n    url: ${url}\n    bind_dn: cn=orgsync,dc=example,dc=org\n    bind_password: \${LDAP_PASSWORD}\n    base_dn: dc=example,dc=org\n    connect_timeout_ms: 200\n${extra}`;
const hris = (url: string, extra = '') => `sources:\n  - name: hr\n    type: hris-json\n    auth: { type: bearer, token: "\${HR_TOKEN}" }\n${extra}    members: { url: "${url}", fields: { id: id, display_name: name } }\n`;
const ENV = { LDAP_PASSWORD: 'ldap-password-0001', HR_TOKEN: 'hr-token-0002' };

describe('plaintext transport refused where credentials would cross it', () => {
  it('ldap:// to a remote host with a bind and no start_tls: refused in every command, naming ldaps://, start_tls and the opt-out', async () => {
    const file = configFile(platform('https://platform.example.com') + ldap('ldap://ldap.example.com:389'));
    for (const command of [['config', 'validate'], ['plan'], ['sync'], ['sources', 'check']]) {
      const r = await runCli([...command, '--config', file], ENV);
      expect({ command, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        command,
        code: 2,
        stdout: '',
        stderr: `orgsync: ${file}:14:5: sources[0].url: ldap:// to ldap.example.com would send the bind DN and password across the network in clear: use ldaps:// or start_tls: true (only the loopback interface may be reached in clear; for a lab, sources[0].allow_insecure_transport: true allows it, loudly)\n`,
      });
    }
  });

  it('ldaps://, start_tls: true, an anonymous bind and the loopback interface are accepted', async () => {
    for (const source of [
      ldap('ldaps://ldap.example.com:636'),
      ldap('ldap://ldap.example.com:389', '    start_tls: true\n'),
      ldap('ldap://127.0.0.1:389'),
      ldap('ldap://localhost:389'),
      ldap('ldap://[::1]:389'),
      'sources:\n  - name: dir\n    type: ldap\n    url: ldap://ldap.example.com:389\n    base_dn: dc=example,dc=org\n',
    ]) {
      const r = await runCli(['config', 'validate', '--config', configFile(platform('https://platform.example.com') + source)], ENV);
      expect({ source, code: r.code, stderr: r.stderr }).toEqual({ source, code: 0, stderr: '' });
    }
  });

  it('http:// for the platform or a credentialed HR source off loopback: refused naming https://; without credentials, or on loopback: accepted', async () => {
    const refused = await runCli(['config', 'validate', '--config', configFile(platform('http://platform.example.com:8080') + hris('http://hr.example.com/people'))], ENV);
    expect(refused.code).toBe(2);
    expect(refused.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/:2:3: platform\.base_url: http:\/\/ to platform\.example\.com would send the API key across the network in clear: use https:\/\/ \(only the loopback interface may be reached in clear; for a lab, platform\.allow_insecure_transport: true allows it, loudly\)$/),
      expect.stringMatching(/: sources\[0\]\.members\.url: http:\/\/ to hr\.example\.com would send the source's credentials \(auth, headers\) across the network in clear: use https:\/\/ .*sources\[0\]\.allow_insecure_transport: true/),
    ]);
    const tokenEndpoint = `sources:\n  - name: hr\n    type: hris-json\n    auth: { type: oauth2-client-credentials, token_url: "http://login.example.com/token", client_id: c, client_secret: "\${HR_TOKEN}" }\n    members: { url: "https://hr.example.com/people", fields: { id: id, display_name: name } }\n`;
    const token = await runCli(['config', 'validate', '--config', configFile(platform('https://platform.example.com') + tokenEndpoint)], ENV);
    expect(token.code).toBe(2);
    expect(token.stderr).toContain('sources[0].auth.token_url: http:// to login.example.com would send the client secret across the network in clear: use https://');
    const open = `sources:\n  - name: hr\n    type: hris-json\n    members: { url: "http://hr.example.com/people", fields: { id: id, display_name: name } }\n`;
    for (const text of [platform('http://127.0.0.1:8080') + hris('http://127.0.0.1:9000/people'), platform('https://platform.example.com') + open]) {
      const r = await runCli(['config', 'validate', '--config', configFile(text)], ENV);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    }
  });

  it('a password in the user-info of an http:// Pushgateway or webhook URL off loopback: refused, allowed only at the top of the file', async () => {
    const text = `${platform('https://platform.example.com').replace('log:', 'metrics:\n  pushgateway_url: http://push:pw-0004@pushgateway.monitoring:9091\nlog:')}notify:\n  webhooks:\n    - url: http://hook:pw-0005@hooks.example.com/orgsync\n    - url: http://hooks.example.com/no-credentials\n`;
    const r = await runCli(['config', 'validate', '--config', configFile(text)], ENV);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n').filter(Boolean).map((l) => l.replace(/^orgsync: [^ ]+ /, ''))).toEqual([
      'metrics.pushgateway_url: http:// to pushgateway.monitoring would send the user-info of the URL across the network in clear: use https:// (only the loopback interface may be reached in clear; for a lab, the top-level allow_insecure_transport: true allows it, loudly)',
      'notify.webhooks[0].url: http:// to hooks.example.com would send the user-info of the URL across the network in clear: use https:// (only the loopback interface may be reached in clear; for a lab, the top-level allow_insecure_transport: true allows it, loudly)',
    ]);
    expect(r.stderr).not.toMatch(/pw-000[45]/);
    const allowed = await runCli(['config', 'validate', '--config', configFile(`${text}allow_insecure_transport: true\n`)], ENV);
    expect(allowed.code).toBe(0);
    expect(allowed.stderr.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('allow_insecure_transport: true (on the block, or for the whole file) accepts it, and every command says so', async () => {
    const perBlock = configFile(platform('http://platform.example.com:8080', '  allow_insecure_transport: true\n') + ldap('ldap://ldap.example.com:389', '    allow_insecure_transport: true\n'));
    const validate = await runCli(['config', 'validate', '--config', perBlock], ENV);
    expect(validate.code).toBe(0);
    expect(validate.stderr).toBe(
      `orgsync: warning: ${perBlock}: platform.base_url: allow_insecure_transport: true lets the API key cross the network to platform.example.com in clear, readable by anyone on the path (labs only; otherwise use https://)\n` +
        `orgsync: warning: ${perBlock}: sources[0].url: allow_insecure_transport: true lets the bind DN and password cross the network to ldap.example.com in clear, readable by anyone on the path (labs only; otherwise use ldaps:// or start_tls: true)\n`,
    );
    const whole = configFile(`${platform('http://platform.example.com:8080') + ldap('ldap://ldap.example.com:389')}allow_insecure_transport: true\n`);
    const again = await runCli(['config', 'validate', '--config', whole], ENV);
    expect(again.code).toBe(0);
    expect(again.stderr.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('the runs log the opt-out as a warning at every start', async () => {
    const emulator: TestEmulator = await startTestEmulator(orgTestSeed());
    try {
      // The platform on loopback; an LDAP directory at a documentation address (TEST-NET-1), allowed in clear.
      const text = `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: t\nlog:\n  level: warn\n  format: json\n${ldap('ldap://192.0.2.1:389', '    allow_insecure_transport: true\n')}`;
      const r = await runCli(['plan', '--config', configFile(text)], ENV);
      const line = r.stderr.split('\n').find((l) => l.includes('allow_insecure_transport: a credential crosses the network in clear'));
      expect(JSON.parse(line!)).toMatchObject({ level: 'warn', setting: 'allow_insecure_transport', warning: expect.stringContaining('sources[0].url: allow_insecure_transport: true lets the bind DN and password cross the network to 192.0.2.1 in clear') });
      expect(r.stderr).not.toContain(ENV.LDAP_PASSWORD);
    } finally {
      await emulator.close();
    }
  });
});

describe('URL schemes, user-info and secret shapes', () => {
  it('a platform base_url of another scheme than http(s) is refused at load (plan no longer hangs on file:)', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://platform.example.com/', 'javascript:alert(1)', 'ldap://platform.example.com']) {
      const file = configFile(platform(url));
      for (const command of [['config', 'validate'], ['plan']]) {
        const r = await runCli([...command, '--config', file], ENV);
        expect({ url, command, code: r.code, stderr: r.stderr }).toEqual({ url, command, code: 2, stderr: `orgsync: ${file}:2:3: platform.base_url: expected an http:// or https:// URL\n` });
      }
    }
  });

  it('a password in a URL\'s user-info is never printed', async () => {
    const file = configFile(platform('https://svc:S3cret-in-the-url@platform.example.com/tenant'));
    const r = await runCli(['config', 'validate', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  platform: https://[redacted]@platform.example.com/tenant\n');
    expect(`${r.stdout}${r.stderr}`).not.toContain('S3cret-in-the-url');
  });

  it('a secret of two lines, or with a control character, is refused at load naming the key (never the value), in every command', async () => {
    const text = 'platform:\n  base_url: http://127.0.0.1:1\n  api_key_file: key\nstate:\n  path: ./state.db\nsync:\n  id: t\nsources:\n  - name: hr\n    type: hris-json\n    auth: { type: bearer, token: "${HR_TOKEN}" }\n    members: { url: "http://127.0.0.1:2/people", fields: { id: id, display_name: name } }\n';
    const file = configFile(text, { key: 'ek_acme_0123456789abcdef\nek_acme_fedcba9876543210\n' });
    for (const command of [['config', 'validate'], ['plan'], ['sync']]) {
      const started = Date.now();
      const r = await runCli([...command, '--config', file], { HR_TOKEN: 'hr-token\u0007-0003' });
      expect({ command, code: r.code, stdout: r.stdout }).toEqual({ command, code: 2, stdout: '' });
      expect(r.stderr).toBe(
        `orgsync: ${file}:3:3: platform.api_key_file: secret file ${join(file, '..', 'key')} holds 2 lines; a secret is one line (write it without the extra lines, e.g. printf '%s' "$SECRET" > file)\n` +
          `orgsync: ${file}:11:27: sources[0].auth.token: the value holds a control character (U+0007); a secret is one line of printable characters\n`,
      );
      expect(r.stderr).not.toContain('fedcba');
      // Refused at load, before any request (it took 56 s of retries before).
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});

describe('loopback hosts', () => {
  let emulator: TestEmulator;
  beforeAll(async () => {
    emulator = await startTestEmulator(orgTestSeed());
  });
  afterAll(async () => {
    await emulator.close();
  });
  it('http:// to the emulator on 127.0.0.1 still works end to end (plan exits 0)', async () => {
    const file = configFile(`platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: t\nsources:\n  - name: hr\n    type: csv\n    members: { file: m.csv, fields: { id: id, display_name: name, email: email } }\nlog:\n  level: warn\n`);
    const r = await runCli(['plan', '--config', file]);
    expect(r.code).toBe(0);
  });
});
