/**
 * HRIS walks that must not end quietly short (issue 21, point 8), links and redirects that must not leave the
 * source's origin with its credentials (point 4), and values of the wrong JSON type (point 7): each against a small
 * HTTP server on loopback.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { read, reasons } from './support.js';

interface Seen {
  server: 'home' | 'other';
  url: string;
  headers: IncomingHttpHeaders;
}

let home: Server;
let other: Server;
let base: string;
let otherBase: string;
const seen: Seen[] = [];
/** Members the SCIM and OData endpoints hold; `drop` leaves some out of the pages while the total still counts them. */
const people = Array.from({ length: 10 }, (_, i) => ({ id: `p${i + 1}`, userName: `p${i + 1}@example.com`, displayName: `Person ${i + 1}` }));

function handler(which: 'home' | 'other') {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    seen.push({ server: which, url: req.url!, headers: req.headers });
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const q = (k: string, d: number) => Number(url.searchParams.get(k) ?? d);
    if (which === 'other') return send({ data: people.slice(8), next: null });
    switch (url.pathname) {
      case '/scim/Users': {
        // Honest SCIM: 10 people, pages of `count`.
        const start = q('startIndex', 1);
        const count = q('count', 100);
        const page = people.slice(start - 1, start - 1 + count);
        return send({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: people.length, startIndex: start, itemsPerPage: page.length, Resources: page });
      }
      case '/scim-short/Users': {
        // Says 10 but the third page comes back empty: 8 arrive.
        const start = q('startIndex', 1);
        const count = q('count', 100);
        const page = start > 8 ? [] : people.slice(start - 1, Math.min(start - 1 + count, 8));
        return send({ totalResults: 10, startIndex: start, itemsPerPage: page.length, Resources: page });
      }
      case '/odata/People': {
        const skip = q('$skip', 0);
        const page = people.slice(skip, skip + 4);
        const next = skip + 4 < people.length ? `${base}/odata/People?$skip=${skip + 4}` : undefined;
        return send({ '@odata.count': people.length, value: page, ...(next ? { '@odata.nextLink': next } : {}) });
      }
      case '/odata-short/People': {
        // The next link is missing after the first page although @odata.count says 10.
        return send({ '@odata.count': 10, value: people.slice(0, 4) });
      }
      case '/odata-v2/User': {
        const skip = q('$skip', 0);
        const page = people.slice(skip, skip + 5);
        return send({ d: { __count: '10', results: page, ...(skip + 5 < people.length ? { __next: `/odata-v2/User?$skip=${skip + 5}` } : {}) } });
      }
      case '/total': {
        // A next-link API with a stated total under meta.total: the walk stops after two pages of three.
        const p = q('p', 0);
        return send({ meta: { total: 10 }, data: people.slice(p * 3, p * 3 + 3), next: p === 0 ? '/total?p=1' : null });
      }
      case '/cursor-loop': {
        // The cursor goes a -> b -> a: a loop through different URLs.
        const c = url.searchParams.get('c');
        const next = c === null ? 'a' : c === 'a' ? 'b' : 'a';
        return send({ data: people.slice(0, 1), next_cursor: next });
      }
      case '/to-other':
        return send({ data: people.slice(0, 8), next: `${otherBase}/more?access_token=leaked` });
      case '/redirect-other':
        return res.writeHead(302, { location: `${otherBase}/moved` }).end();
      case '/redirect-home':
        return res.writeHead(307, { location: '/scim/Users?startIndex=1&count=100' }).end();
      case '/typed':
        return send({
          data: [
            { id: 'ok1', name: 'Fine Person', email: 'ok1@example.com', dept: { id: 'D1' } },
            { id: 'bad-array', name: ['Ada', 'Lovelace'], email: 'a@example.com' },
            { id: 'bad-dept', name: 'Dept As String', email: 'b@example.com', dept: 'D1' },
            { id: 'bad-object', name: { first: 'X' }, email: 'c@example.com' },
            { id: 7, name: 'Numeric Id', email: 'd@example.com', active: true },
          ],
        });
      default:
        res.writeHead(404).end();
    }
  };
}

beforeAll(async () => {
  home = createServer(handler('home'));
  other = createServer(handler('other'));
  await new Promise<void>((r) => home.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(home.address() as AddressInfo).port}`;
  // "localhost" makes a different origin on the same machine.
  otherBase = `http://localhost:${(other.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => home.close(r));
  await new Promise((r) => other.close(r));
});

const fields = { id: 'id', display_name: 'displayName', email: 'userName' };
const src = (members: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'hr',
  type: 'hris-json',
  max_attempts: 1,
  auth: { type: 'bearer', token: 'tok-SECRET-123' },
  headers: { 'X-Tenant': 'acme', 'X-Api-Key': 'key-SECRET-456' },
  members: { fields, ...members },
  ...extra,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

describe('short reads: a stated total that does not arrive fails the read', () => {
  it('SCIM: walks startIndex/count until totalResults', async () => {
    seen.length = 0;
    const state = await read([src({ url: `${base}/scim/Users`, pagination: { type: 'scim', count: 4 } })]);
    expect([...state.members].map((m) => m.source_id)).toEqual(people.map((p) => p.id));
    expect(seen.map((s) => s.url)).toEqual(['/scim/Users?startIndex=1&count=4', '/scim/Users?startIndex=5&count=4', '/scim/Users?startIndex=9&count=4']);
  });

  it('SCIM: totalResults 10, 8 arrive', async () => {
    const err = await failure(read([src({ url: `${base}/scim-short/Users`, pagination: { type: 'scim', count: 4 } })]));
    expect(err?.code).toBe('SOURCE_UNREADABLE');
    expect(err?.message).toBe('source "hr": members: short read: the source stated 10 records (totalResults) but the walk ended after 8; nothing is written from a partial read');
  });

  it('OData v4: follows @odata.nextLink and checks @odata.count', async () => {
    const state = await read([src({ url: `${base}/odata/People`, pagination: { type: 'odata' } })]);
    expect(state.members).toHaveLength(10);
    const err = await failure(read([src({ url: `${base}/odata-short/People`, pagination: { type: 'odata' } })]));
    expect(err?.message).toBe('source "hr": members: short read: the source stated 10 records (@odata.count) but the walk ended after 4; nothing is written from a partial read');
  });

  it('OData v2 (d.results, d.__next, d.__count)', async () => {
    seen.length = 0;
    const state = await read([src({ url: `${base}/odata-v2/User`, pagination: { type: 'odata' } })]);
    expect(state.members).toHaveLength(10);
    expect([...state.members][5]!.origin).toEqual({ source: 'hr', location: `${base}/odata-v2/User?$skip=5#$.d.results[0]` });
  });

  it('total_path on any pagination kind', async () => {
    const err = await failure(read([src({ url: `${base}/total`, items_path: 'data', total_path: 'meta.total', pagination: { type: 'next-link', next_path: 'next' } })]));
    expect(err?.message).toBe('source "hr": members: short read: the source stated 10 records (total_path "meta.total") but the walk ended after 6; nothing is written from a partial read');
  });

  it('a cursor that comes back fails the read instead of looping', async () => {
    const err = await failure(read([src({ url: `${base}/cursor-loop`, items_path: 'data', pagination: { type: 'cursor', cursor_path: 'next_cursor', cursor_param: 'c' } })]));
    expect(err?.message).toBe('source "hr": members: page 3 gave the cursor "a" that page 1 gave already: the pagination is looping; the read stops');
  });
});

describe('the origin rule: links and redirects stay on the source\'s origin; credentials never leave it', () => {
  it('a next link to another origin is refused, naming the origin', async () => {
    seen.length = 0;
    const err = await failure(read([src({ url: `${base}/to-other`, items_path: 'data', pagination: { type: 'next-link', next_path: 'next' } })]));
    expect(err?.message).toBe(
      `source "hr": members: a next link leads to origin ${otherBase}, not the source's ${base}; refused (list ${otherBase} in allowed_origins to follow it; credentials are never sent there)`,
    );
    expect(err?.message).not.toContain('leaked');
    expect(seen.filter((s) => s.server === 'other')).toEqual([]);
  });

  it('listed in allowed_origins it is followed, without Authorization or key headers', async () => {
    seen.length = 0;
    const state = await read([src({ url: `${base}/to-other`, items_path: 'data', pagination: { type: 'next-link', next_path: 'next' } }, { allowed_origins: [otherBase] })]);
    expect(state.members).toHaveLength(10);
    const there = seen.filter((s) => s.server === 'other');
    expect(there).toHaveLength(1);
    expect(there[0]!.headers.authorization).toBeUndefined();
    expect(there[0]!.headers['x-api-key']).toBeUndefined();
    expect(there[0]!.headers['x-tenant']).toBe('acme');
    const here = seen.filter((s) => s.server === 'home');
    expect(here[0]!.headers.authorization).toBe('Bearer tok-SECRET-123');
    expect(here[0]!.headers['x-api-key']).toBe('key-SECRET-456');
  });

  it('a redirect to another origin is refused; one on the same origin is followed with the credentials', async () => {
    seen.length = 0;
    const err = await failure(read([src({ url: `${base}/redirect-other` })]));
    expect(err?.message).toBe(
      `source "hr": members: a redirect (HTTP 302) leads to origin ${otherBase}, not the source's ${base}; refused (list ${otherBase} in allowed_origins to follow it; credentials are never sent there)`,
    );
    expect(seen.filter((s) => s.server === 'other')).toEqual([]);
    seen.length = 0;
    const state = await read([src({ url: `${base}/redirect-home`, pagination: { type: 'scim' } })]);
    expect(state.members).toHaveLength(10);
    expect(seen.map((s) => [s.url, s.headers.authorization])).toEqual([
      ['/redirect-home?startIndex=1&count=100', 'Bearer tok-SECRET-123'],
      ['/scim/Users?startIndex=1&count=100', 'Bearer tok-SECRET-123'],
    ]);
  });
});

describe('wrong JSON types quarantine the record with the field, the type found and the type expected', () => {
  it('never coerced: an array name, a department given as a string, an object name', async () => {
    const state = await read([
      src(
        { url: `${base}/typed`, items_path: 'data', fields: { id: 'id', display_name: 'name', email: 'email', department: 'dept.id', status: 'active' }, status_map: { true: 'active', false: 'suspended' } },
        { departments: { file: 'hris/departments.json', items_path: 'data', fields: { id: 'id', name: 'name' } } },
      ),
    ]);
    expect([...state.members].map((m) => m.source_id)).toEqual(['ok1', '7']);
    const byId = Object.fromEntries(state.quarantine.filter((q) => q.entity === 'members').map((q) => [q.source_id, [q.reason, q.message]]));
    expect(byId).toMatchObject({
      'bad-array': ['wrong_type', 'display_name: name is an array, expected a string, number or boolean'],
      'bad-dept': ['wrong_type', 'department: dept is a string, expected an object with "id"'],
      'bad-object': ['wrong_type', 'display_name: name is an object, expected a string, number or boolean'],
    });
    expect(reasons(state).find((r) => r.source_id === 'bad-array')!.location).toBe(`${base}/typed#$.data[1]`);
  });
});
