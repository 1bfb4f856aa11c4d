/**
 * Reusable secret-canary search for fault tests: a known secret is put where an operator's secret would be
 * (an environment variable, a *_file mount, an API key, a token in a `next` link), every error path is run,
 * and then every output the process has — captured text (stdout, stderr, logs, /status, /metrics) and every
 * file it wrote (state DB with its WAL, plan files, anything under the workspace) — is searched for it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The forms a secret may take once written: as is, URL-encoded, JSON-escaped, base64 (a Basic header). */
export function canaryForms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')])];
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/** One place a canary was found. */
export interface CanaryHit {
  canary: string;
  /** The name of the captured text, or the file's path. */
  where: string;
  /** Up to 60 characters either side of the first hit. */
  excerpt: string;
}

/**
 * Searches captured texts (by name) and every file under `dirs` (as raw bytes, so SQLite pages and WAL frames
 * count) for each canary in each of its forms. An empty answer means no secret left.
 */
export function findCanaries(canaries: readonly string[], texts: Record<string, string>, dirs: readonly string[]): CanaryHit[] {
  const hits: CanaryHit[] = [];
  const sources: [string, Buffer][] = [
    ...Object.entries(texts).map(([name, text]) => [name, Buffer.from(text, 'utf8')] as [string, Buffer]),
    ...dirs.flatMap(filesUnder).map((f) => [f, readFileSync(f)] as [string, Buffer]),
  ];
  for (const canary of canaries) {
    for (const form of canaryForms(canary)) {
      for (const [where, bytes] of sources) {
        const at = bytes.indexOf(form, 0, 'utf8');
        if (at >= 0) hits.push({ canary, where, excerpt: bytes.subarray(Math.max(0, at - 60), at + form.length + 60).toString('utf8') });
      }
    }
  }
  return hits;
}
