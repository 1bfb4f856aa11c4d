/**
 * The platform client's Agent, loaded from undici's own files without its index (src/platform/undici-agent.ts), and
 * what every command leaves unloaded until it is needed (issue 31: a run carries what it loads to its peak).
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/platform/undici-agent.js';
import { CLI, ensureBuilt } from '../helpers/build.js';
import { tempDir } from '../helpers/temp.js';

describe('undici-agent', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => res.end(JSON.stringify({ path: req.url })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is the Agent undici exports (the same class from the module cache), so a moved file fails here, not in a run', async () => {
    const undici = await import('undici');
    expect(Agent).toBe(undici.Agent);
  });

  it('requests over real HTTP with the API methods undici\'s index would have added', async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const res = await agent.request({ origin, path: '/api/v1/ping', method: 'GET' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ path: '/api/v1/ping' });
    } finally {
      await agent.close();
    }
  });

  it('the built CLI loads neither undici\'s index, pino-pretty nor node-cron until a command needs them', () => {
    ensureBuilt();
    const dir = tempDir();
    const probe = join(dir, 'scripts.cjs');
    const out = join(dir, 'scripts.txt');
    // Every script V8 parses, as the inspector reports it: ES modules and CommonJS alike.
    writeFileSync(
      probe,
      `const s = new (require('node:inspector').Session)(); s.connect(); const urls = [];
s.on('Debugger.scriptParsed', (m) => urls.push(m.params.url)); s.post('Debugger.enable');
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, urls.join('\\n')));`,
    );
    const r = spawnSync(process.execPath, ['--require', probe, CLI, '--version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const scripts = readFileSync(out, 'utf8').split('\n');
    expect(scripts.some((u) => u.includes('/node_modules/undici/lib/dispatcher/agent.js'))).toBe(true);
    const unwanted = scripts.filter((u) => /\/node_modules\/(undici\/index\.js|undici\/lib\/web\/|pino-pretty\/|node-cron\/)/.test(u));
    expect(unwanted).toEqual([]);
  });
});
