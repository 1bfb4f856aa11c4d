/**
 * `orgsync sources preview` for tests: runs the CLI entry (main, in-process, as users run it) and returns what it
 * printed; `previewJson` returns the parsed `--output json` document, for tables of sources (one preset per row) that
 * check what a mapping makes of a vendor's payload before `sources check` and `sync` run it.
 */
import { runCli } from './cli.js';
import type { PreviewDocument } from '../../src/sources/preview/render.js';

/** The outcome of one `orgsync sources ...` call. */
export interface PreviewRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `orgsync <args>` with `env` as its environment (secrets of the config's `${VARS}`), through the one CLI runner. */
export function runSourcesCli(args: string[], env: Record<string, string> = {}): Promise<PreviewRun> {
  return runCli(args, env);
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
