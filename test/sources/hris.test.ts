import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { read } from './support.js';

/** A tiny HRIS on loopback: routes by path, records every request's URL and headers. */
let server: Server;
let base: string;
const requests: { url: string; headers: IncomingHttpHeaders }[] = [];
const failures = new Map<string, number[]>(); // path -> statuses to answer first

const people = Array.from({ length: 7 }, (_, i) => ({ id: `u${i + 1}`, name: { first: `First${i + 1}`, last: `Last${i + 1}` }, email: `p${i + 1}@example.com`, dept: { id: i % 2 ? 'D2' : 'D1' }, state: i === 6 ? 'Inactive' : 'Active' }));

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    requests.push({ url: req.url!, headers: req.headers });
    const queued = failures.get(url.pathname);
    if (queued?.length) {
      res.writeHead(queued.shift()!, { 'content-type': 'application/json' }).end('{"error":"nope"}');
      return;
    }
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const n = (k: string, d: number) => Number(url.searchParams.get(k) ?? d);
    switch (url.pathname) {
      case '/next': {
        const page = n('p', 0);
        return send({ data: { employees: people.slice(page * 3, page * 3 + 3) }, links: { next: page * 3 + 3 < people.length ? `/next?p=${page + 1}` : null } });
      }
      case '/cursor': {
        const start = Number(url.searchParams.get('after') ?? 0);
        const size = n('limit', 2);
        const end = start + size;
        return send({ items: people.slice(start, end), meta: { next: end < people.length ? String(end) : '' } });
      }
      case '/page': {
        const page = n('page', 1);
        const size = n('per_page', 3);
        return send({ results: people.slice((page - 1) * size, page * size) });
      }
      case '/offset': {
        return send({ individuals: people.slice(n('offset', 0), n('offset', 0) + n('limit', 100)) });
      }
      case '/departments':
        return send([{ id: 'D1', name: 'One' }, { id: 'D2', name: 'Two', parent: { id: 'D1' } }]);
      case '/broken-page-2': {
        const page = n('p', 0);
        if (page === 1) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": {"employees": [');
        return send({ data: { employees: people.slice(0, 3) }, links: { next: '/broken-page-2?p=1' } });
      }
      case '/loop':
        return send({ data: { employees: people.slice(0, 1) }, links: { next: '/loop' } });
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const fields = { id: 'id', display_name: '{name.first} {name.last}', email: 'email', department: 'dept.id', status: 'state' };
const statusMap = { Active: 'active', Inactive: 'left' };

function source(members: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    name: 'hris',
    type: 'hris-json',
    headers: { Authorization: 'Bearer t0ken-secret', 'X-Tenant': 'acme' },
    departments: { url: `${base}/departments`, fields: { id: 'id', name: 'name', parent: 'parent.id' } },
    members: { fields, status_map: statusMap, ...members },
    ...extra,
  };
}

describe('HRIS JSON over HTTP', () => {
  it('walks next-link pages and sends the headers with every request', async () => {
    requests.length = 0;
    const state = await read([source({ url: `${base}/next`, items_path: 'data.employees', pagination: { type: 'next-link', next_path: 'links.next' } })]);
    expect(state.quarantine).toEqual([]);
    expect([...state.members].map((m) => m.source_id)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']);
    expect([...state.members][0]).toMatchObject({ display_name: 'First1 Last1', email: 'p1@example.com', department_source_id: 'D1', status: 'active' });
    expect([...state.members][6]!.status).toBe('left');
    expect([...state.members][3]!.origin).toEqual({ source: 'hris', location: `${base}/next?p=1#$.data.employees[0]` });
    expect(state.departments.map((d) => [d.source_id, d.parent_source_id])).toEqual([
      ['D1', undefined],
      ['D2', 'D1'],
    ]);
    expect(requests.map((r) => r.url)).toEqual(['/departments', '/next', '/next?p=1', '/next?p=2']);
    for (const r of requests) {
      expect(r.headers.authorization).toBe('Bearer t0ken-secret');
      expect(r.headers['x-tenant']).toBe('acme');
    }
  });

  it('walks a cursor', async () => {
    requests.length = 0;
    const state = await read([source({ url: `${base}/cursor`, items_path: 'items', pagination: { type: 'cursor', cursor_path: 'meta.next', cursor_param: 'after', size_param: 'limit', size: 3 } })]);
    expect(state.members).toHaveLength(7);
    expect(requests.map((r) => r.url).slice(1)).toEqual(['/cursor?limit=3', '/cursor?limit=3&after=3', '/cursor?limit=3&after=6']);
  });

  it('walks page numbers until a short page', async () => {
    requests.length = 0;
    const state = await read([source({ url: `${base}/page`, items_path: 'results', pagination: { type: 'page', page_param: 'page', size_param: 'per_page', size: 3 } })]);
    expect(state.members).toHaveLength(7);
    expect(requests.map((r) => r.url).slice(1)).toEqual(['/page?page=1&per_page=3', '/page?page=2&per_page=3', '/page?page=3&per_page=3']);
  });

  it('walks offsets', async () => {
    requests.length = 0;
    const state = await read([source({ url: `${base}/offset`, items_path: 'individuals', pagination: { type: 'offset', size: 4 } })]);
    expect(state.members).toHaveLength(7);
    expect(requests.map((r) => r.url).slice(1)).toEqual(['/offset?offset=0&limit=4', '/offset?offset=4&limit=4']);
  });

  it('retries a 503 and a 429, then reads on', async () => {
    failures.set('/page', [503, 429]);
    const state = await read([source({ url: `${base}/page`, items_path: 'results', pagination: { type: 'page', page_param: 'page', size_param: 'per_page', size: 3 } })]);
    expect(state.members).toHaveLength(7);
  });

  it('fails the source on an HTTP error that persists', async () => {
    failures.set('/page', [500, 500, 500]);
    await expect(read([source({ url: `${base}/page`, items_path: 'results', pagination: { type: 'page', size: 3, size_param: 'per_page' } })])).rejects.toThrow(
      `source "hris": members: GET ${base}/page?page=1&per_page=3 answered HTTP 500`,
    );
  });

  it('fails at once on 401', async () => {
    failures.set('/departments', [401]);
    await expect(read([source({ url: `${base}/page`, items_path: 'results' })])).rejects.toThrow(`source "hris": departments: GET ${base}/departments answered HTTP 401`);
  });

  it('fails the whole source when a later page is malformed (a partial walk is never used)', async () => {
    const err = await read([source({ url: `${base}/broken-page-2`, items_path: 'data.employees', pagination: { type: 'next-link', next_path: 'links.next' } })]).catch((e: Error) => e);
    expect((err as Error).message).toMatch(new RegExp(`^source "hris": members: ${base.replace(/[.]/g, '\\.')}/broken-page-2\\?p=1: malformed JSON: `));
  });

  it('stops a next-link loop', async () => {
    await expect(read([source({ url: `${base}/loop`, items_path: 'data.employees', pagination: { type: 'next-link', next_path: 'links.next' } })])).rejects.toThrow(
      `source "hris": members: the pagination returned ${base}/loop twice`,
    );
  });

  it('fails when the server is down', async () => {
    await expect(read([source({ url: 'http://127.0.0.1:9/x' }, { max_attempts: 1, departments: undefined })])).rejects.toThrow('source "hris": members: GET http://127.0.0.1:9/x failed: ECONNREFUSED');
  });

  it('reads a 404 for a wrong URL as an error, not as no employees', async () => {
    await expect(read([source({ url: `${base}/nope` })])).rejects.toThrow(`source "hris": members: GET ${base}/nope answered HTTP 404`);
  });
});
