/**
 * `npm run bench:delta` (not a test; issue 31 point 4): a Microsoft-Graph-like source of 100,000 users on loopback,
 * read by delta against a full read, through the hris-json connector with the microsoft-graph preset and the state
 * DB's source snapshot (src/mirror/source-snapshot.ts), as `orgsync sync` reads it.
 *
 * 1. `first read`: full (the latest delta token, then /users at $top=999 with @odata.count), every user staged and
 *    committed to the snapshot;
 * 2. 1% churn in the source: 800 users changed (jobTitle), 100 added, 100 removed;
 * 3. `delta`: the saved deltaLink, Graph-like delta pages of 200 (changed users carry only the changed property);
 * 4. `full (--full-read)`: the same source read in full again (snapshot replaced), the steady-state alternative;
 *    its desired members must equal the delta's (checked; the bench fails otherwise).
 *
 * The Graph double runs in a child process (this file with --server), so serving the JSON does not share the
 * reader's event loop. Per read: records read, requests, wall time (ms) and members mapped, as JSON lines on stdout.
 * Size: BENCH_USERS (100000); churn: BENCH_CHURN_PERCENT (1).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseConfig } from '../src/config/load.js';
import { stateConfigSchema } from '../src/config/platform.js';
import type { DesiredMember } from '../src/domain/index.js';
import { openStateDb } from '../src/mirror/db.js';
import { SourceSnapshotStore } from '../src/mirror/source-snapshot.js';
import { systemClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/shared/logger.js';
import { DeltaSession, readSourcesReport } from '../src/sources/index.js';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const CHURN = Number(process.env.BENCH_CHURN_PERCENT ?? 1) / 100;
const DELTA_PAGE = 200;

type User = Record<string, unknown> & { id: string };

function user(n: number): User {
  return {
    id: `u${String(n).padStart(7, '0')}`,
    displayName: `User ${n}`,
    mail: `user${n}@bench.test`,
    userPrincipalName: `user${n}@bench.test`,
    mobilePhone: null,
    businessPhones: [],
    jobTitle: `Title ${n % 50}`,
    department: `Dept ${n % 200}`,
    accountEnabled: true,
    userType: 'Member',
    employeeHireDate: null,
    employeeLeaveDateTime: null,
  };
}

/** The Graph double (child process): /users, /users/delta, and POST /_churn to change 1% of the users. */
function serveGraph(): void {
  const users = new Map<string, User>();
  for (let n = 1; n <= USERS; n++) users.set(user(n).id, user(n));
  let sorted = [...users.keys()].sort();
  const log: { version: number; id: string; props: Record<string, unknown> | undefined; created: boolean }[] = [];
  let version = 1;
  let served = 0;
  const server = createServer((req, res) => {
    const base = `http://${req.headers.host}`;
    const url = new URL(req.url!, base);
    const q = url.searchParams;
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/_churn') return send(churn());
    if (url.pathname === '/_requests') return send({ served });
    served += 1;
    if (url.pathname === '/v1.0/users') {
      const from = Number(q.get('$skiptoken') ?? 0);
      const next = new URL(url);
      next.searchParams.set('$skiptoken', String(from + 999));
      return send({ ...(from === 0 ? { '@odata.count': sorted.length } : {}), value: sorted.slice(from, from + 999).map((id) => users.get(id)), ...(from + 999 < sorted.length ? { '@odata.nextLink': next.toString() } : {}) });
    }
    const token = q.get('$deltatoken');
    if (token === 'latest') return send({ value: [], '@odata.deltaLink': `${base}/v1.0/users/delta?$deltatoken=${version}` });
    const [fromText, offsetText] = (q.get('$skiptoken') ?? `${token}-0`).split('-');
    const items = changesSince(Number(fromText));
    const offset = Number(offsetText);
    const more = offset + DELTA_PAGE < items.length;
    send({
      value: items.slice(offset, offset + DELTA_PAGE),
      ...(more ? { '@odata.nextLink': `${base}/v1.0/users/delta?$skiptoken=${fromText}-${offset + DELTA_PAGE}` } : { '@odata.deltaLink': `${base}/v1.0/users/delta?$deltatoken=${version}` }),
    });
  });
  const changesSince = (from: number): unknown[] => {
    const out: unknown[] = [];
    for (const c of log) {
      if (c.version <= from) continue;
      if (c.props === undefined) out.push({ id: c.id, '@removed': { reason: 'deleted' } });
      else out.push(c.created ? c.props : { id: c.id, ...c.props });
    }
    return out;
  };
  const churn = (): { changed: number; added: number; removed: number } => {
    const total = Math.round(users.size * CHURN);
    const added = Math.round(total / 10);
    const removed = added;
    const changed = total - added - removed;
    version += 1;
    for (let i = 0; i < changed; i++) {
      const id = sorted[(i * 97) % sorted.length]!;
      const props = { jobTitle: `Changed ${i}` };
      users.set(id, { ...users.get(id)!, ...props });
      log.push({ version, id, props, created: false });
    }
    for (let i = 0; i < added; i++) {
      const u = user(USERS + 1 + i);
      users.set(u.id, u);
      log.push({ version, id: u.id, props: u, created: true });
    }
    for (let i = 0; i < removed; i++) {
      const id = sorted[sorted.length - 1 - i * 13]!;
      users.delete(id);
      log.push({ version, id, props: undefined, created: false });
    }
    sorted = [...users.keys()].sort();
    return { changed, added, removed };
  };
  // The bench's own probes (/_requests, /_churn) may come after a long read: keep idle connections open meanwhile.
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
}

/** A digest of the desired members, independent of their order and origin. */
function membersDigest(members: readonly DesiredMember[]): string {
  const h = createHash('sha256');
  for (const m of [...members].sort((a, b) => a.source_id.localeCompare(b.source_id))) h.update(JSON.stringify({ ...m, origin: undefined }));
  return h.digest('hex');
}

/** One read of the bench source through a DeltaSession that keeps the snapshot, timed. */
async function timedRead(label: string, base: string, dbPath: string, fullRead: boolean, requests: () => Promise<number>): Promise<string> {
  const config = parseConfig(`platform: { base_url: "http://127.0.0.1:1" }\nsources:\n  - name: graph\n    preset: microsoft-graph\n    base_url: ${base}\n    auth: { type: bearer, token: "\${T}" }\n`, '/bench/orgsync.yaml', { T: 'bench-token' });
  const db = openStateDb(dbPath, { busyTimeoutMs: stateConfigSchema.parse({}).busy_timeout });
  try {
    const session = new DeltaSession({ store: new SourceSnapshotStore(db), sources: config.sources, timezone: config.timezone, clock: systemClock, logger: silentLogger, fullRead, keep: true });
    const before = await requests();
    const started = performance.now();
    const report = await readSourcesReport(config, { env: {}, logger: silentLogger, delta: session });
    session.commit();
    const wallMs = Math.round(performance.now() - started);
    const read = report.sources[0]!.read!;
    const line = { bench: 'delta-graph', read: label, mode: read.mode, reason: read.reason, records_read: read.recordsRead, requests: (await requests()) - before, wall_ms: wallMs, members: report.state.members.length };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    return membersDigest([...report.state.members]);
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--server'], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const port = Number((await once(createInterface({ input: child.stdout }), 'line'))[0]);
  const base = `http://127.0.0.1:${port}`;
  // Requests the reader made, as the double counted them.
  const requests = async (): Promise<number> => ((await (await fetch(`${base}/_requests`)).json()) as { served: number }).served;
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-delta-'));
  try {
    const dbPath = join(dir, 'state.db');
    await timedRead('first read', base, dbPath, false, requests);
    const churn = (await (await fetch(`${base}/_churn`, { method: 'POST' })).json()) as Record<string, number>;
    process.stdout.write(`${JSON.stringify({ bench: 'delta-graph', churn })}\n`);
    const byDelta = await timedRead('delta', base, dbPath, false, requests);
    const inFull = await timedRead('full (--full-read)', base, dbPath, true, requests);
    if (byDelta !== inFull) throw new Error('the delta-built members differ from the full read');
    process.stdout.write(`${JSON.stringify({ bench: 'delta-graph', agree: true, users: USERS })}\n`);
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--server')) serveGraph();
else await main();
