import { createServer, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { main } from '../../src/cli/main.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { DEMO_KEY, demoDir, demoSeed, demoWorkspace, getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';

const HRIS_TOKEN = 'hris-Tk9f2LmQ-secret';
const CUSTOM_HEADER_SECRET = 'custom-hdr-secret-77aa';

describe('a whole sync never prints a secret', { timeout: 180_000 }, () => {
  let emulator: TestEmulator | undefined;
  let hris: Server | undefined;
  afterAll(async () => {
    await emulator?.close();
    await new Promise((r) => (hris ? hris.close(r) : r(undefined)));
  });

  it('no API key, bearer token, header secret or secret file content in stdout, stderr, /status or /metrics at log level trace', async () => {
    emulator = await startTestEmulator(demoSeed());
    const employees = readFileSync(join(demoDir, 'employees.json'), 'utf8');
    hris = createServer((req, res) => {
      const ok = req.headers.authorization === `Bearer ${HRIS_TOKEN}` && req.headers['x-api-token'] === CUSTOM_HEADER_SECRET && req.url?.includes(`key=${HRIS_TOKEN}`);
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(ok ? employees : '{"error":"unauthorized"}');
    });
    await new Promise<void>((r) => hris!.listen(0, '127.0.0.1', r));
    const hrisUrl = `http://127.0.0.1:${(hris.address() as AddressInfo).port}/employees`;
    const sources = `sources:
  - name: hr
    type: csv
    phone_region: US
    departments: { file: departments.csv, fields: { id: dept_id, name: name, parent: parent_id } }
    positions: { file: positions.csv, fields: { id: pos_id, name: name } }
    members:
      file: members.csv
      fields: { id: employee_id, display_name: "{first_name} {last_name}", email: email, phone: phone, title: title, department: dept_id, status: status }
      status_map: { active: active, leave: suspended, terminated: left }
  - name: hris
    type: hris-json
    phone_region: US
    headers: { Authorization: "Bearer \${HRIS_TOKEN}", X-Api-Token: "\${CUSTOM_TOKEN}" }
    members:
      url: ${hrisUrl}?key=\${HRIS_TOKEN}
      items_path: data.employees
      fields: { id: id, display_name: "{firstName} {lastName}", email: workEmail, phone: mobilePhone, title: jobTitle, department: department.id, status: employmentStatus }
      status_map: { Active: active, Inactive: left }
`;
    const dir = demoWorkspace({ url: emulator.url, apiKeyLine: 'api_key_file: api-key.txt', sourcesYaml: sources, logLevel: 'trace' });
    writeFileSync(join(dir, 'api-key.txt'), `${DEMO_KEY}\n`);
    const env = { HRIS_TOKEN, CUSTOM_TOKEN: CUSTOM_HEADER_SECRET };

    const validate = captureContext(env);
    expect(await main(['config', 'validate', '--config', join(dir, 'orgsync.yaml')], validate.ctx)).toBe(0);

    const cap = captureContext(env);
    let url = '';
    const config = loadConfig(join(dir, 'orgsync.yaml'), env);
    expect(config.meta.secrets).toEqual(expect.arrayContaining([DEMO_KEY, HRIS_TOKEN, CUSTOM_HEADER_SECRET]));
    const exit = daemonMain(config, cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(), onListening: (u) => (url = u) });
    const runs = await until('the run to finish', async () => {
      if (!url) return undefined;
      const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return list[0] && list[0].result !== 'running' ? list : undefined;
    });
    // The run really used every secret: the HRIS answered (its 60 contractors are in the writes) and the platform accepted the key.
    expect(runs[0]).toMatchObject({ result: 'success', summary: { writes: 417 } });
    const status = await (await fetch(`${url}/status`)).text();
    const metrics = await (await fetch(`${url}/metrics`)).text();
    cap.shutdown.abort();
    expect(await exit).toBe(0);

    const everything = [validate.out.stdout, validate.out.stderr, cap.out.stdout, cap.out.stderr, status, metrics].join('\n');
    expect(cap.out.stdout.split('\n').length).toBeGreaterThan(20);
    for (const secret of [DEMO_KEY, HRIS_TOKEN, CUSTOM_HEADER_SECRET]) expect(everything).not.toContain(secret);
    // The effective config was logged (debug), with the key, the headers and the token inside the URL redacted.
    const configLine = cap.out.stdout.split('\n').find((l) => l.includes('"msg":"config loaded"'));
    expect(configLine).toContain('?key=[redacted]');
    expect(configLine).toContain('"Authorization":"[redacted]"');
  });
});
