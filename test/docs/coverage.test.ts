/**
 * The docs keep up with the code: every config key of the schema is in docs/configuration.md, every command and flag
 * in docs/commands.md, every metric in docs/operations.md. (Relative links: test/docs/links.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { repoRoot } from '../daemon/support.js';
import { runCli } from '../helpers/cli.js';

const doc = (name: string) => readFileSync(join(repoRoot, 'docs', name), 'utf8');

/** Whether `word` appears inside some `code span` of the text (alone or as part of a dotted path, a flag, a line). */
function inCode(text: string, word: string): boolean {
  const esc = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp('`[^`\\n]*(?<![A-Za-z0-9_-])' + esc + '(?![A-Za-z0-9_-])[^`\\n]*`').test(text);
}

type Json = { [k: string]: unknown };

/** Every property name of the JSON Schema, with a dotted path for the message. */
function schemaKeys(schema: Json): Map<string, string> {
  const keys = new Map<string, string>();
  const seen = new Set<unknown>();
  const defs = (schema.$defs ?? {}) as Record<string, Json>;
  const visit = (node: unknown, path: string): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) return node.forEach((n) => visit(n, path));
    const o = node as Json;
    if (typeof o.$ref === 'string' && o.$ref.startsWith('#/$defs/')) visit(defs[o.$ref.slice(8)], path);
    for (const [k, v] of Object.entries((o.properties ?? {}) as Record<string, unknown>)) {
      const at = path ? `${path}.${k}` : k;
      if (!keys.has(k)) keys.set(k, at);
      visit(v, at);
    }
    for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', 'prefixItems']) if (key in o) visit(o[key], path);
  };
  visit(schema, '');
  return keys;
}

async function help(args: string[]): Promise<string> {
  return (await runCli([...args, '--help'])).stdout;
}

/** Every command path (`mirror status`) with its long flags, from the CLI's own help. */
async function commands(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const walk = async (path: string[]): Promise<void> => {
    const text = await help(path);
    const flags = [...text.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((f) => f !== '--help' && f !== '--version');
    const subs = text.includes('\nCommands:\n') ? [...text.slice(text.indexOf('\nCommands:\n')).matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((n) => n !== 'help') : [];
    if (path.length > 0) out.set(path.join(' '), flags);
    for (const sub of subs) await walk([...path, sub]);
  };
  await walk([]);
  return out;
}

describe('docs coverage', () => {
  it('docs/configuration.md names every key of the config schema', () => {
    const text = doc('configuration.md');
    const keys = schemaKeys(configJsonSchema() as Json);
    expect(keys.size).toBeGreaterThan(60);
    expect(inCode(text, 'no_such_key_anywhere')).toBe(false);
    const missing = [...keys].filter(([k]) => !inCode(text, k)).map(([, at]) => at);
    expect(missing).toEqual([]);
  });

  it('docs/commands.md names every command and every flag', async () => {
    const text = doc('commands.md');
    const all = await commands();
    expect([...all.keys()]).toEqual(expect.arrayContaining(['plan', 'sync', 'mirror status', 'sources check', 'config validate']));
    expect(all.get('plan')).toEqual(expect.arrayContaining(['--config', '--output', '--out', '--detailed-exitcode']));
    const missing: string[] = [];
    for (const [command, flags] of all) {
      if (!inCode(text, `orgsync ${command}`)) missing.push(`orgsync ${command}`);
      for (const flag of flags) if (!inCode(text, flag)) missing.push(`orgsync ${command} ${flag}`);
    }
    expect(missing).toEqual([]);
  });

  it('docs/operations.md names every metric', async () => {
    const text = doc('operations.md');
    const metrics = new OrgsyncMetrics({ build: { version: '0.0.0' }, defaultMetrics: false });
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !inCode(text, n))).toEqual([]);
  });
});
