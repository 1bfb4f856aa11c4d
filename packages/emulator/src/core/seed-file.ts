/**
 * Reading and validating a seed (YAML, or JSON, which YAML also reads). A bad seed is one line naming the file and the
 * path of the problem, e.g. `seed.yaml: tenants[0].api_keys[1].key: an API key has the form ek_<prefix>_<secret>`.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { SeedError } from './seed-error.js';
import { seedSchema, type Seed } from './seed.js';

/** `tenants[0].api_keys[1].key` from a zod issue path. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const at = issue.keys.map((k) => formatIssuePath([...issue.path, k]));
    return `${at.join(', ')}: unknown key`;
  }
  const where = formatIssuePath(issue.path);
  return `${where === '' ? '(top level)' : where}: ${issue.message}`;
}

/** Problems zod cannot see: duplicate tenant ids and API keys. */
function crossCheck(seed: Seed): string | undefined {
  const tenantIds = new Set<number>();
  const keys = new Set<string>();
  for (const [t, tenant] of seed.tenants.entries()) {
    if (tenantIds.has(tenant.id)) return `tenants[${t}].id: duplicate tenant id ${tenant.id}`;
    tenantIds.add(tenant.id);
    for (const [k, apiKey] of tenant.api_keys.entries()) {
      if (keys.has(apiKey.key)) return `tenants[${t}].api_keys[${k}].key: duplicate API key`;
      keys.add(apiKey.key);
    }
    const contacts = new Set<string>();
    for (const [m, member] of tenant.members.entries()) {
      if (!member.email && !member.phone) return `tenants[${t}].members[${m}]: needs an email or a phone`;
      for (const c of [member.email?.toLowerCase(), member.phone]) {
        if (!c) continue;
        if (contacts.has(c)) return `tenants[${t}].members[${m}]: duplicate member ${c}`;
        contacts.add(c);
      }
    }
  }
  return undefined;
}

/** Validates a parsed seed value (object from YAML/JSON or a test). `source` names it in the error. */
export function parseSeed(value: unknown, source = 'seed'): Seed {
  const result = seedSchema.safeParse(value ?? {});
  if (!result.success) {
    const first = result.error.issues[0];
    throw new SeedError(`${source}: ${first ? describeIssue(first) : 'invalid seed'}`);
  }
  const problem = crossCheck(result.data);
  if (problem) throw new SeedError(`${source}: ${problem}`);
  return result.data;
}

/** Parses seed text (YAML or JSON). */
export function parseSeedText(text: string, source = 'seed'): Seed {
  let value: unknown;
  try {
    value = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    const e = err as { message?: string; linePos?: { line: number; col: number }[] };
    const pos = e.linePos?.[0];
    const firstLine = (String(e.message ?? err).split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new SeedError(`${source}${pos ? `:${pos.line}:${pos.col}` : ''}: not valid YAML or JSON: ${firstLine}`);
  }
  return parseSeed(value, source);
}

/** Reads and validates a seed file. Throws a SeedError (code SEED_INVALID, exit code 2) with one line. */
export function loadSeedFile(path: string): Seed {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SeedError(`${path}: cannot read the seed file${code ? ` (${code})` : ''}`);
  }
  return parseSeedText(text, path);
}
