/**
 * Issue 31 point 1: the daemon's /plan and /plan.json with a large plan. /plan.json is sent in chunks, written as
 * the socket drains, byte for byte what `plan --output json` prints (the JSON of a million changes is longer than a
 * string can be); /plan is the HTML report with a bounded number of rows per table. Real HTTP over loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsServer } from '../../src/observability/http-server.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { planJsonChunks, type PlanJson } from '../../src/planner/render.js';
import { renderPlanHtml } from '../../src/planner/report/index.js';
import { memberCreate, planOf } from './saved-plan-large-fixtures.js';

const CHANGES = 40_000;
const TOKEN = 'read-token-for-the-plan-routes';

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe(`/plan and /plan.json of ${CHANGES.toLocaleString('en-US')} changes`, () => {
  it('/plan.json streams the whole plan, chunk by chunk, as plan --output json prints it; /plan lists 200 rows and counts the rest', async () => {
    const plan = planOf(Array.from({ length: CHANGES }, (_, i) => memberCreate(i)));
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    let pulled = 0;
    server = await startOpsServer('127.0.0.1:0', {
      registry: metrics.registry,
      readiness: () => ({ ready: true, checks: {} }),
      status: () => ({}),
      plan: () => ({
        renderHtml: () => renderPlanHtml(plan),
        jsonChunks: function* () {
          for (const chunk of planJsonChunks(plan)) {
            pulled += 1;
            yield chunk;
          }
        },
      }),
      access: { readToken: () => TOKEN },
    });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const res = await fetch(`${server.url}/plan.json`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await res.text();
    expect(body).toBe([...planJsonChunks(plan)].join(''));
    const doc = JSON.parse(body) as PlanJson;
    expect(doc.changes).toHaveLength(CHANGES);
    expect(doc.summary.members.create).toBe(CHANGES);
    expect(pulled).toBeGreaterThan(100);

    const page = await fetch(`${server.url}/plan`, { headers });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`Member creates (${CHANGES})`);
    expect(html).toContain(`… and ${(CHANGES - 200).toLocaleString('en-US')} more member creates`);
    expect(html.match(/<tr class="row" data-kind="create">/g)?.length).toBe(200);
  }, 120_000);

  it('a client that goes away mid-response stops the rendering there, and the listener keeps answering', async () => {
    const plan = planOf(Array.from({ length: CHANGES }, (_, i) => memberCreate(i)));
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    let total = 0;
    for (const _ of planJsonChunks(plan)) total += 1;
    const served: { pulled: number; closed: Promise<void> }[] = [];
    server = await startOpsServer('127.0.0.1:0', {
      registry: metrics.registry,
      readiness: () => ({ ready: true, checks: {} }),
      status: () => ({}),
      plan: () => ({
        renderHtml: () => '',
        jsonChunks: () => {
          let close!: () => void;
          const one = { pulled: 0, closed: new Promise<void>((resolve) => (close = resolve)) };
          served.push(one);
          return (function* () {
            try {
              for (const chunk of planJsonChunks(plan)) {
                one.pulled += 1;
                yield chunk;
              }
            } finally {
              close();
            }
          })();
        },
      }),
      access: { readToken: () => TOKEN },
    });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const aborted = new AbortController();
    const res = await fetch(`${server.url}/plan.json`, { headers, signal: aborted.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).startsWith('{\n  "format_version": ')).toBe(true);
    aborted.abort();
    await reader.closed.catch(() => undefined);
    // The handler waits for the socket to drain; the client's close ends that wait and the chunks stop there.
    await served[0]!.closed;
    expect(served[0]!.pulled).toBeLessThan(total);
    const again = await fetch(`${server.url}/plan.json`, { headers });
    expect((JSON.parse(await again.text()) as PlanJson).changes).toHaveLength(CHANGES);
    expect(served[1]!.pulled).toBe(total);
  }, 120_000);
});
