/**
 * Issue 32 point 1: a key the platform refuses (401, 403 scope_denied) is named by the platform's URL, the setting it
 * came from, where it was read (environment variable or file) and its fingerprint, never by the key; the line carries
 * its catalogue code and what to check, and the run exits 1. `config validate` warns about a key of the wrong shape.
 * Against the emulator in-process, through the CLI entry.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const WRONG = 'ek_acme_wrongwrongwrong0000';
const WRONG_TOO = 'ek_acme_alsowrongwrong1111';
const sha8 = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 8);
const CHECK = 'check that the key is current (not revoked or expired) and belongs to this tenant (CREDENTIAL_REJECTED, docs/errors.md#credential_rejected)';
const REFUSED_401 = String.raw`the platform rejected the credential \(GET /org/(departments|positions|members): 401 invalid_api_key: [^)]*\)`;

let emulator: TestEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator(orgTestSeed());
});
afterAll(async () => {
  await emulator.close();
});

/** A config in a new folder with `platform` as its platform block's extra lines; returns its path. */
function config(platform: string, files: Record<string, string> = {}): string {
  const dir = tempDir('orgsync-cred-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(file, `platform:\n  base_url: ${emulator.url}\n${platform}state:\n  path: ./state.db\nlog:\n  level: silent\nsources: []\n`);
  return file;
}

const run = runCli;

/** Escapes `text` for a RegExp. */
const re = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a refused key names where it came from', () => {
  it('a wrong key from $ORGSYNC_API_KEY: the URL, the setting, the variable and the fingerprint, never the key; exit 1', async () => {
    const file = config('  api_key: ${ORGSYNC_API_KEY}\n');
    const r = await run(['plan', '--config', file], { ORGSYNC_API_KEY: WRONG });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^orgsync: ${REFUSED_401}: the platform at ${re(emulator.url)} refused the API key from platform\\.api_key \\(read from \\$ORGSYNC_API_KEY; key fingerprint sha256:${sha8(WRONG)}\\); ${re(CHECK)}\n$`),
    );
    expect(r.stderr + r.stdout).not.toContain('wrongwrongwrong');
  });

  it('a wrong key from api_key_file names the file it was read from', async () => {
    const file = config('  api_key_file: orgsync-key\n', { 'orgsync-key': `${WRONG}\n` });
    const r = await run(['mirror', 'refresh', '--config', file]);
    expect(r.code).toBe(1);
    const keyFile = join(file, '..', 'orgsync-key');
    expect(r.stderr).toMatch(new RegExp(`refused the API key from platform\\.api_key \\(read from file ${re(keyFile)}; key fingerprint sha256:${sha8(WRONG)}\\); `));
    expect(r.stderr).not.toContain('wrongwrongwrong');
  });

  it('with several keys all refused, the line names the last one: platform.api_keys[1] and its file', async () => {
    // One request at a time: the first refusal drops api_keys[0] for the run, the second is api_keys[1]'s, the last key.
    const file = config('  concurrency: 1\n  api_keys:\n    - key: ${HR_KEY_0}\n    - key_file: second-key\n', { 'second-key': WRONG_TOO });
    const r = await run(['plan', '--config', file], { HR_KEY_0: WRONG });
    expect(r.code).toBe(1);
    const keyFile = join(file, '..', 'second-key');
    expect(r.stderr).toMatch(
      new RegExp(`^orgsync: ${REFUSED_401}: the platform at ${re(emulator.url)} refused the API key from platform\\.api_keys\\[1\\] \\(read from file ${re(keyFile)}; key fingerprint sha256:${sha8(WRONG_TOO)}\\); ${re(CHECK)}\n$`),
    );
    expect(r.stderr).not.toContain('wrongwrong');
    expect(r.stderr).not.toContain('alsowrong');
  });

  it('a key without tenant.org.read (403 scope_denied) written in the config says which scope it lacks', async () => {
    const file = config(`  api_key: ${TEST_KEYS.acmeNone}\n`);
    const r = await run(['plan', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^orgsync: the platform credential lacks the scope tenant\\.org\\.read \\(GET /org/\\w+: 403 scope_denied[^)]*\\): the platform at ${re(emulator.url)} refused the API key from platform\\.api_key \\(read from the config file; key fingerprint sha256:${sha8(TEST_KEYS.acmeNone)}\\); give the key the scope tenant\\.org\\.read in the tenant's admin console, or configure a key that has it \\(CREDENTIAL_REJECTED, docs/errors\\.md#credential_rejected\\)\n$`,
      ),
    );
    expect(r.stderr).not.toContain(TEST_KEYS.acmeNone);
  });
});

describe('config validate and the shape of a key', () => {
  it('warns (stderr, exit 0) about a key that is no ek_ key, naming the setting and the variable, not the value', async () => {
    const file = config('  api_key: ${ORGSYNC_API_KEY}\n  api_keys:\n    - key: ${OTHER_KEY}\n');
    const r = await run(['config', 'validate', '--config', file], { ORGSYNC_API_KEY: 'Bearer-abc123-not-a-key', OTHER_KEY: TEST_KEYS.acmeRw });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${file}: valid\n`);
    expect(r.stderr).toBe(
      `orgsync: warning: ${file}: platform.api_key (read from $ORGSYNC_API_KEY): the value looks like no API key of the platform; platform keys read ek_<prefix>_<secret> (created in the tenant's admin console, scopes tenant.org.read and tenant.org.write)\n`,
    );
  });

  it('names a session token as such, and says nothing about well-formed keys', async () => {
    const token = config('  api_key_file: token\n', { token: 'st_acme_0123456789abcdef' });
    const t = await run(['config', 'validate', '--config', token]);
    expect(t.code).toBe(0);
    expect(t.stderr).toContain(`platform.api_key (read from file ${join(token, '..', 'token')}): the value looks like a session token (st_), which cannot write and expires;`);
    expect(t.stderr).not.toContain('0123456789abcdef');
    const good = await run(['config', 'validate', '--config', config(`  api_key: ${TEST_KEYS.acmeRw}\n`)]);
    expect(good.code).toBe(0);
    expect(good.stderr).toBe('');
  });
});
