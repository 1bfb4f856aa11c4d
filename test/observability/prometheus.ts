import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp.js';

/** A private Prometheus on a loopback port with its own config and data dir. */
export interface TestPrometheus {
  url: string;
  /** Runs an instant query; the result vector. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Polls `check` (bounded attempts, short waits) until it returns a value; throws with the last state otherwise. */
  waitFor<T>(what: string, check: () => Promise<T | undefined>, attempts?: number): Promise<T>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `prometheus` scraping `target` (host:port) every second. */
export async function startPrometheus(bin: string, target: string): Promise<TestPrometheus> {
  const dir = tempDir('orgsync-prom-');
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: orgsync\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  let output = '';
  const child: ChildProcess = spawn(bin, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const waitFor = async <T>(what: string, check: () => Promise<T | undefined>, attempts = 600): Promise<T> => {
    let last: unknown;
    for (let i = 0; i < attempts; i += 1) {
      try {
        const v = await check();
        if (v !== undefined) return v;
      } catch (err) {
        last = err;
      }
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}) while waiting for ${what}:\n${output.slice(-2000)}`);
      await pause(200);
    }
    throw new Error(`gave up waiting for ${what} after ${attempts} attempts (last error: ${String(last)})\n${output.slice(-2000)}`);
  };

  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, pause(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitFor('prometheus to be ready', async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined));
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] }; error?: string };
      if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
      return body.data!.result;
    },
    waitFor,
    stop,
  };
}
