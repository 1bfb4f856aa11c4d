import { execFileSync, spawnSync } from 'node:child_process';

/** Finds a binary on PATH (or Debian's /usr/bin); undefined when absent. */
function which(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  return r.status === 0 && path ? path : undefined;
}

/**
 * A Prometheus tool the real-parts tests need. Missing on a laptop: the tests skip with a printed notice.
 * Missing under CI=true: an error, since CI installs Debian's prometheus package.
 */
export function requireTool(name: 'promtool' | 'prometheus'): string | undefined {
  const path = which(name);
  if (path) return path;
  if (process.env.CI === 'true') throw new Error(`${name} is not installed, but CI=true: .ci/run installs Debian's prometheus package`);
  console.warn(`NOTICE: ${name} is not installed (Debian package "prometheus"); skipping the tests that need it.`);
  return undefined;
}

/** Runs promtool with input on stdin; returns its exit status and output. */
export function promtool(bin: string, args: string[], input?: string): { status: number; output: string } {
  try {
    const out = execFileSync(bin, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    return { status: 0, output: out };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { status: e.status ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
