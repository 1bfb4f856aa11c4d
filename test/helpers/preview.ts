/**
 * `orgsync sources preview` for tests: runs the CLI entry (main, in-process, as users run it) and returns what it
 * printed; `previewJson` returns the parsed `--output json` document, for tables of sources (one preset per row) that
 * check what a mapping makes of a vendor's payload before `sources check` and `sync` run it.
 */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { PreviewDocument } from '../../src/sources/preview/render.js';

/** The outcome of one `orgsync sources ...` call. */
export interface PreviewRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `orgsync <args>` with `env` as its environment (secrets of the config's `${VARS}`). */
export async function runSourcesCli(args: string[], env: Record<string, string> = {}): Promise<PreviewRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(args, { env, stdout, stderr, shutdownSignal: new AbortController().signal, isTTY: false });
  return { code, stdout: out, stderr: err };
}

/** Options of previewJson. */
export interface PreviewJsonOptions {
  source?: string;
  entity?: 'members' | 'departments' | 'positions';
  limit?: number;
  /** The day dates are judged on (ISO date or date-time). */
  today?: string;
  env?: Record<string, string>;
}

/** Runs `orgsync sources preview --config FILE --output json` and returns the document; throws with stderr when it fails. */
export async function previewJson(configFile: string, o: PreviewJsonOptions = {}): Promise<PreviewDocument> {
  const args = ['sources', 'preview', '--config', configFile, '--output', 'json'];
  if (o.source !== undefined) args.push('--source', o.source);
  if (o.entity !== undefined) args.push('--entity', o.entity);
  if (o.limit !== undefined) args.push('--limit', String(o.limit));
  if (o.today !== undefined) args.push('--today', o.today);
  const r = await runSourcesCli(args, o.env);
  if (r.code !== 0) throw new Error(`sources preview exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as PreviewDocument;
}
