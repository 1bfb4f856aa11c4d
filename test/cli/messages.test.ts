/**
 * Messages that name their cause and the setting to change (issue 16 point 6), asserted word for word, and the
 * CLI's usage contract: no command is a usage error, an unknown option is named before a missing one, every
 * command's help has an example.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../daemon/support.js';
import { runCli as cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const DEMO = join(repoRoot, 'config/demo/orgsync.yaml');

describe('usage', () => {
  it('orgsync with no command prints the help and exits 2', async () => {
    const r = await cli([]);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toContain('Usage: orgsync [options] [command]');
  });

  it('a command group without its command (orgsync mirror) prints its help and exits 2', async () => {
    const r = await cli(['mirror']);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toContain('Usage: orgsync mirror [options] [command]');
  });

  it('--confg names the unknown option and suggests --config, instead of "required option --config not specified"', async () => {
    const r = await cli(['plan', '--confg', 'orgsync.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: unknown option '--confg'\n(Did you mean --config?)\n(run with --help for usage)\n");
  });

  it('daemon --listen is validated like metrics.listen (exit 2, nothing started)', async () => {
    const r = await cli(['daemon', '--config', DEMO, '--listen', 'nonsense']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('orgsync: --listen "nonsense": expected host:port (e.g. 0.0.0.0:9464), or "" to turn the listener off (the same as metrics.listen)\n');
  });

  it('every command\'s help has an example', async () => {
    const top = await cli(['--help']);
    const names = [...top.stdout.matchAll(/^ {2}([a-z]+)(?: \[options\]| <|\s{2,}| *$)/gm)].map((m) => m[1]!).filter((n) => n !== 'help');
    expect(names).toEqual(expect.arrayContaining(['config', 'daemon', 'demo', 'mirror', 'plan', 'sync', 'sources', 'apply', 'explain', 'adopt', 'release', 'emulator']));
    const leaves: string[][] = [];
    for (const name of names) {
      const help = (await cli([name, '--help'])).stdout;
      const subs = help.includes('Commands:') ? [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1]!).filter((n) => n !== 'help') : [];
      if (subs.length === 0) leaves.push([name]);
      else for (const sub of subs) leaves.push([name, sub]);
    }
    const without: string[] = [];
    for (const leaf of leaves) {
      const help = (await cli([...leaf, '--help'])).stdout;
      if (!/^Examples?:$/m.test(help) || !help.includes(`$ orgsync ${leaf.join(' ')}`)) without.push(leaf.join(' '));
    }
    expect(without).toEqual([]);
    expect((await cli(['plan', '--help'])).stdout).toMatch(/\$ orgsync plan .*--out /);
  });
});

describe('sources check never needs the platform key', () => {
  it('reads the demo sources with ORGSYNC_DEMO_API_KEY unset', async () => {
    const r = await cli(['sources', 'check', '--config', DEMO], {});
    expect(r.stderr).not.toContain('ORGSYNC_DEMO_API_KEY');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('source hr (csv): 36 departments, 62 positions, 253 members, 0 quarantined\n');
  });

  it('a platform.api_key_file that does not exist is not read either', async () => {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(join(dir, 'm.csv'), 'id,name,mail\nu1,Ann Lee,ann@acme.test\n');
    writeFileSync(cfg, 'platform:\n  base_url: http://127.0.0.1:1\n  api_key_file: /nonexistent/key\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: m.csv\n      fields: { id: id, display_name: name, email: mail }\n');
    const r = await cli(['sources', 'check', '--config', cfg]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('source hr (csv): 0 departments, 0 positions, 1 member, 0 quarantined\n');
  });
});

describe('config messages name the cause and the setting', () => {
  it('a UTF-16 config file says so and how to fix it', async () => {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('platform:\n  base_url: http://x\n', 'utf16le')]));
    const r = await cli(['config', 'validate', '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`orgsync: ${cfg}: the config file is UTF-16LE, but config files are read as UTF-8: save it as UTF-8 (e.g. iconv -f utf-16le -t utf-8)\n`);
  });

  it('a missing fields.id is "required", naming what to map, not "Invalid input"', async () => {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, 'platform:\n  base_url: http://127.0.0.1:1\nsources:\n  - name: hr\n    type: csv\n    members:\n      file: m.csv\n      fields: { display_name: n }\n');
    const r = await cli(['config', 'validate', '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`orgsync: ${cfg}:8:7: sources[0].members.fields.id: required (map id to the column, attribute or JSON path that holds it)\n`);
  });

  it('config validate checks every file the config names and reports every problem of every source', async () => {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(
      cfg,
      'platform:\n  base_url: http://127.0.0.1:1\nsources:\n' +
        '  - name: hr\n    type: csv\n    members:\n      file: m.csv\n      fields: { id: a, display_name: n }\n' +
        '  - name: dir\n    type: ldap\n    url: ldaps://ldap.example:636\n    base_dn: dc=example\n    ca_file: ca.pem\n',
    );
    const r = await cli(['config', 'validate', '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `orgsync: ${cfg}:7:7: sources[0].members.file: cannot read ${join(dir, 'm.csv')}: ENOENT\n` +
        `orgsync: ${cfg}:13:5: sources[1].ca_file: cannot read ${join(dir, 'ca.pem')}: ENOENT\n`,
    );
  });

  it('an unreadable bind_password_file and a schema problem of another source are both reported', async () => {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(
      cfg,
      'platform:\n  base_url: http://127.0.0.1:1\nsources:\n' +
        '  - name: dir\n    type: ldap\n    url: ldaps://ldap.example:636\n    base_dn: dc=example\n    bind_dn: cn=a\n    bind_password_file: pw\n' +
        '  - name: h\n    type: hris-json\n    members:\n      file: e.json\n      items_path: ""\n      fields: { display_name: n }\n',
    );
    const r = await cli(['config', 'validate', '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `orgsync: ${cfg}:9:5: sources[0].bind_password_file: cannot read secret file ${join(dir, 'pw')}: ENOENT\n` +
        `orgsync: ${cfg}:15:7: sources[1].members.fields.id: required (map id to the column, attribute or JSON path that holds it)\n`,
    );
  });

  it('a state.path whose folder cannot be made names the folder and state.path', async () => {
    const dir = tempDir('orgsync-msg-');
    writeFileSync(join(dir, 'afile'), '');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, 'platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_a_b\nstate:\n  path: afile/state.db\nsources: []\n');
    const r = await cli(['mirror', 'refresh', '--config', cfg]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`orgsync: cannot open state DB ${join(dir, 'afile/state.db')}: ${join(dir, 'afile')} is not a folder (EEXIST); set state.path to a file in a folder this process can write\n`);
  });
});

describe('platform and HRIS messages name the URL and the setting to change', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await new Promise<void>((done) => server!.close(() => done()));
    server = undefined;
  });

  /** A plain-HTTP loopback server that answers every request with `status` (no emulator: a wrong URL); 0: never answers. */
  async function plainServer(status: number): Promise<string> {
    server = createServer((req, res) => {
      req.resume();
      if (status !== 0) res.writeHead(status, { 'content-type': 'text/plain' }).end('not here');
    });
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  function config(baseUrl: string): string {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, `platform:\n  base_url: ${baseUrl}\n  api_key: ek_a_b\n  max_attempts: 1\n  max_retry_time_ms: 0\nstate:\n  path: state.db\nsources: []\n`);
    return cfg;
  }

  it('a base_url that answers 404 on a collection names the full URL (no userinfo, no query) and platform.base_url', async () => {
    const host = await plainServer(404);
    const r = await cli(['mirror', 'refresh', '--config', config(`http://user:pw@${host}/wrong?k=v`)]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `orgsync: platform request failed: GET http://${host}/wrong/api/external/v1/org/positions: 404: check platform.base_url (it should point at the tenant API root)\n`,
    );
  });

  function hrisConfig(url: string): string {
    const dir = tempDir('orgsync-msg-');
    const cfg = join(dir, 'c.yaml');
    writeFileSync(
      cfg,
      'platform:\n  base_url: http://127.0.0.1:1\nsources:\n' +
        `  - name: hr\n    type: hris-json\n    timeout_ms: 200\n    max_attempts: 1\n    members:\n      url: ${url}\n      items_path: data\n      fields: { id: id, display_name: n }\n`,
    );
    return cfg;
  }

  it('an HRIS that does not answer in time: the URL (redacted), the time waited and timeout_ms', async () => {
    const host = await plainServer(0);
    const r = await cli(['sources', 'check', '--config', hrisConfig(`http://${host}/v1/people?key=s3cret`)]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `orgsync: source "hr": members: GET http://${host}/v1/people?key=[redacted]: no answer within 200 ms (UND_ERR_HEADERS_TIMEOUT): raise this source's timeout_ms if the HRIS is this slow\n`,
    );
  });

  it('an HRIS url with https:// on a plain-HTTP server says the server does not speak TLS', async () => {
    const host = await plainServer(200);
    const r = await cli(['sources', 'check', '--config', hrisConfig(`https://${host}/v1/people`)]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`orgsync: source "hr": members: GET https://${host}/v1/people: the server does not speak TLS: is members.url https:// where it should be http://?\n`);
  });

  it('https:// against a plain-HTTP server says the server does not speak TLS', async () => {
    const host = await plainServer(200);
    const r = await cli(['mirror', 'refresh', '--config', config(`https://${host}`)]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `orgsync: platform request failed: GET https://${host}/api/external/v1/org/positions: the server does not speak TLS: is platform.base_url https:// where it should be http://?\n`,
    );
  });
});
