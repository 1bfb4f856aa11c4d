import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { parseConfig } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const examplePath = resolve(import.meta.dirname, '../../config/orgsync.example.yaml');
const exampleText = readFileSync(examplePath, 'utf8');
const env = { ORGSYNC_API_KEY: 'ek_acme_0123456789abcdef', HRIS_TOKEN: 'hris-token-123456' };
const base = 'platform:\n  base_url: http://127.0.0.1:8080\n';

/** The CLI in-process (test/helpers/cli.ts) with this file's environment, its output named as the assertions read it. */
async function cli(argv: string[], cliEnv: Record<string, string | undefined> = env) {
  const r = await runCli(argv, cliEnv);
  return { code: r.code, out: r.stdout, err: r.stderr };
}

/** Every property name anywhere in a JSON Schema. */
function propertyNames(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => propertyNames(n, into));
  else if (node && typeof node === 'object') {
    const obj = node as Record<string, unknown>;
    if (obj.properties && typeof obj.properties === 'object') for (const k of Object.keys(obj.properties)) into.add(k);
    for (const v of Object.values(obj)) propertyNames(v, into);
  }
  return into;
}

describe('config/orgsync.example.yaml', () => {
  it('validates', () => {
    const cfg = parseConfig(exampleText, examplePath, env);
    expect(cfg.schedule).toBe('*/30 * * * *');
    expect(cfg.timezone).toBe('UTC');
    expect(cfg.metrics).toEqual({ listen: '0.0.0.0:9464', pushgateway_url: '' });
    expect(cfg.log.level).toBe('info');
  });

  it('documents every field of the schema (a new field without an example line fails here)', () => {
    const names = [...propertyNames(configJsonSchema())];
    expect(names.length).toBeGreaterThan(20);
    const missing = names.filter((n) => !new RegExp(`(^|[\\s{,#-])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`, 'm').test(exampleText));
    expect(missing).toEqual([]);
  });

  it('is accepted by the generated JSON Schema as written', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(configJsonSchema());
    const ok = validate(parse(exampleText));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });
});

describe('operations config blocks', () => {
  it('fills the defaults of schedule, timezone, metrics and log', () => {
    const cfg = parseConfig(base, '/c.yaml', {});
    expect(cfg.schedule).toBe('*/30 * * * *');
    expect(cfg.timezone).toBe('UTC');
    expect(cfg.metrics).toEqual({ listen: '0.0.0.0:9464', pushgateway_url: '' });
    expect(cfg.log).toEqual({ level: 'info', format: 'auto', redact: [], personal_data: false });
  });

  it('accepts six-field schedules and IANA zones', () => {
    const cfg = parseConfig(`${base}schedule: "0 */5 * * * *"\ntimezone: Asia/Shanghai\n`, '/c.yaml', {});
    expect(cfg.schedule).toBe('0 */5 * * * *');
    expect(cfg.timezone).toBe('Asia/Shanghai');
  });

  it.each([
    ['schedule: "61 * * * *"\n', '/c.yaml:3:1: schedule: invalid cron expression "61 * * * *": minute: 61 is a invalid expression for minute'],
    ['schedule: every hour\n', '/c.yaml:3:1: schedule: invalid cron expression "every hour": expression: expected 5 or 6 fields but got 2'],
    ['timezone: Mars/Olympus\n', '/c.yaml:3:1: timezone: unknown time zone (use an IANA name such as UTC or Europe/Berlin)'],
    ['metrics:\n  listen: localhost\n', '/c.yaml:4:3: metrics.listen: expected host:port (e.g. 0.0.0.0:9464), or "" to turn the listener off'],
    ['metrics:\n  pushgateway_url: ftp://x\n', '/c.yaml:4:3: metrics.pushgateway_url: '],
    ['metrics:\n  port: 1\n', '/c.yaml:4:3: metrics.port: unknown key'],
    ['log:\n  level: loud\n', '/c.yaml:4:3: log.level: Invalid option: expected one of "trace"|"debug"|"info"|"warn"|"error"|"fatal"|"silent"'],
    ['log:\n  format: xml\n', '/c.yaml:4:3: log.format: Invalid option: expected one of "auto"|"json"|"pretty"'],
  ])('rejects %j with an exact message', (block, message) => {
    expect(() => parseConfig(`${base}${block}`, '/c.yaml', {})).toThrow(message);
  });
});

describe('orgsync config', () => {
  it('validate: prints "valid" and exits 0', async () => {
    const r = await cli(['config', 'validate', '--config', examplePath]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`${examplePath}: valid\n`);
    expect(r.out).toContain('sources: hr (csv), hris (hris-json)');
  });

  it('validate: one line naming file, line:column, path and problem, exit 2', async () => {
    const dir = tempDir('orgsync-cfgcli-');
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `${base}schedule: "5 25 * * *"\n`);
    const r = await cli(['config', 'validate', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`orgsync: ${file}:3:1: schedule: invalid cron expression "5 25 * * *": hour: 25 is a invalid expression for hour\n`);
  });

  it('validate: a missing file is exit 2 with its path', async () => {
    const r = await cli(['config', 'validate', '--config', '/nonexistent/orgsync.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('orgsync: cannot read config file /nonexistent/orgsync.yaml: ENOENT\n');
  });

  it('validate: the example validates without any environment (its ${ENV:-default}s)', async () => {
    const r = await cli(['config', 'validate', '--config', examplePath], {});
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('validate: an unset ${ENV} names the variable', async () => {
    const dir = tempDir('orgsync-cfgcli-');
    const file = join(dir, 'env.yaml');
    writeFileSync(file, `${base}  api_key: \${ORGSYNC_API_KEY}\n`);
    const r = await cli(['config', 'validate', '--config', file], {});
    expect(r.code).toBe(2);
    expect(r.err).toBe(`orgsync: ${file}:3:3: platform.api_key: environment variable ORGSYNC_API_KEY is not set\n`);
  });

  it('schema: prints the JSON Schema with every block and the *_file secret forms', async () => {
    const r = await cli(['config', 'schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { $schema: string; properties: Record<string, { properties?: Record<string, unknown> }>; required: string[] };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['platform', 'state', 'sync', 'sources', 'schedule', 'timezone', 'metrics', 'log']));
    expect(schema.required).toContain('platform');
    expect(schema.properties.platform!.properties).toHaveProperty('api_key_file');
    expect(schema.properties.metrics!.properties).toHaveProperty('pushgateway_url');
  });

  it('--help shows examples', async () => {
    for (const argv of [['config', '--help'], ['config', 'validate', '--help'], ['config', 'schema', '--help']]) {
      const r = await cli(argv);
      expect(r.code).toBe(0);
      expect(r.out).toContain('Examples:');
    }
  });
});
