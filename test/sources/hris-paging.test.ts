/**
 * The ends of a list and the totals vendors give (issue 45): a 204 No Content, an empty body or an empty list ends a
 * walk (said at debug), `total_header` reads a stated total from a response header (X-Total-Count) so a short read
 * fails, and every page's location shows its paging position (only secrets and other query values redacted). Each
 * against a small HTTP server on loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDesiredState } from '../../src/sources/index.js';
import type { Logger } from '../../src/shared/logger.js';
import { silentLogger } from '../../src/shared/logger.js';
import { instantClock, read, sourcesConfig } from './support.js';

let server: Server;
let base: string;
const seen: string[] = [];
const people = Array.from({ length: 6 }, (_, i) => ({ associateOID: `G3P${i + 1}`, name: `Person ${i + 1}`, mail: `p${i + 1}@example.com` }));

function handler(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url!, 'http://x');
  seen.push(req.url!);
  const send = (body: unknown, headers: Record<string, string> = {}): void => void res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const skip = Number(url.searchParams.get('$skip') ?? 0);
  const top = Number(url.searchParams.get('$top') ?? 100);
  const page = people.slice(skip, skip + top);
  switch (url.pathname) {
    case '/adp/workers':
      // ADP: past the last page the answer is 204 No Content.
      if (page.length === 0) return void res.writeHead(204).end();
      return send({ workers: page });
    case '/empty-body/workers':
      if (page.length === 0) return void res.writeHead(200, { 'content-type': 'application/json' }).end('');
      return send({ workers: page });
    case '/gusto/employees': {
      // Gusto: page/per, the total in X-Total-Count; `short` leaves the last record out while the header counts it.
      const p = Number(url.searchParams.get('page'));
      const per = Number(url.searchParams.get('per'));
      const all = url.searchParams.get('short') === '1' ? people.slice(0, 5) : people;
      return send(all.slice((p - 1) * per, p * per), { 'X-Total-Count': String(people.length), 'X-Page': String(p) });
    }
    case '/bad-total':
      return send([people[0]], { 'X-Total-Count': 'many' });
    case '/cursor-empty': {
      // A cursor API whose empty page still carries a cursor.
      const c = url.searchParams.get('cursor');
      if (c === null) return send({ data: people.slice(0, 3), next: 'c2' });
      if (c === 'c2') return send({ data: [], next: 'c3' });
      return send({ data: people.slice(3), next: null });
    }
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const fields = { id: 'associateOID', display_name: 'name', email: 'mail' };
const src = (members: Record<string, unknown>) => ({ name: 'hr', type: 'hris-json', max_attempts: 1, members: { fields, ...members } });
const offset = { type: 'offset', offset_param: '$skip', size_param: '$top', size: 2 };
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

/** A logger that keeps its debug lines. */
function debugLines(): { logger: Logger; lines: { obj: Record<string, unknown>; msg: string }[] } {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const logger: Logger = {
    ...silentLogger,
    debug: (obj: unknown, msg?: string) => void lines.push({ obj: obj as Record<string, unknown>, msg: msg ?? '' }),
    child: () => logger,
  } as Logger;
  return { logger, lines };
}

describe('the end of a list', () => {
  it('a 204 No Content past the last page ends the walk (a headcount the page size divides), said at debug', async () => {
    seen.length = 0;
    const { logger, lines } = debugLines();
    const state = await readDesiredState(sourcesConfig([src({ url: `${base}/adp/workers`, items_path: 'workers', pagination: offset })]), { env: {}, logger, clock: instantClock });
    expect([...state.members].map((m) => m.source_id)).toEqual(people.map((p) => p.associateOID));
    expect(seen).toEqual(['/adp/workers?%24skip=0&%24top=2', '/adp/workers?%24skip=2&%24top=2', '/adp/workers?%24skip=4&%24top=2', '/adp/workers?%24skip=6&%24top=2']);
    expect(lines.find((l) => l.msg.startsWith('HRIS answered HTTP 204'))).toEqual({
      obj: { source: 'hr', entity: 'members', page: 4, url: `${base}/adp/workers?%24skip=6&%24top=2` },
      msg: 'HRIS answered HTTP 204 No Content: the list ends here',
    });
  });

  it('an empty body ends it too', async () => {
    const state = await read([src({ url: `${base}/empty-body/workers`, items_path: 'workers', pagination: offset })]);
    expect(state.members).toHaveLength(6);
  });

  it('an empty list ends a cursor walk by default; end_on_empty: false walks on', async () => {
    seen.length = 0;
    const cursor = { type: 'cursor', cursor_path: 'next', cursor_param: 'cursor' };
    const { logger, lines } = debugLines();
    const state = await readDesiredState(sourcesConfig([src({ url: `${base}/cursor-empty`, items_path: 'data', pagination: cursor })]), { env: {}, logger, clock: instantClock });
    expect(state.members).toHaveLength(3);
    expect(seen).toEqual(['/cursor-empty', '/cursor-empty?cursor=c2']);
    expect(lines.map((l) => l.msg)).toContain('HRIS answered an empty list: the list ends here (pagination.end_on_empty)');
    const all = await read([src({ url: `${base}/cursor-empty`, items_path: 'data', pagination: { ...cursor, end_on_empty: false } })]);
    expect(all.members).toHaveLength(6);
  });
});

describe('totals in a response header (total_header)', () => {
  const page = { type: 'page', page_param: 'page', size_param: 'per', size: 4 };

  it('X-Total-Count that arrives whole: read', async () => {
    const state = await read([src({ url: `${base}/gusto/employees`, total_header: 'X-Total-Count', pagination: page })]);
    expect(state.members).toHaveLength(6);
  });

  it('X-Total-Count 6, 5 arrive: a short read fails the source and names the header', async () => {
    const err = await failure(read([src({ url: `${base}/gusto/employees?short=1`, total_header: 'X-Total-Count', pagination: page })]));
    expect(err?.code).toBe('SOURCE_UNREADABLE');
    expect(err?.message).toBe('source "hr": members: short read: the source stated 6 records (header X-Total-Count) but the walk ended after 5; nothing is written from a partial read');
  });

  it('a header that is not a count fails the source, naming the page', async () => {
    const err = await failure(read([src({ url: `${base}/bad-total`, total_header: 'X-Total-Count' })]));
    expect(err?.message).toBe(`source "hr": members: ${base}/bad-total: header X-Total-Count is not a count of records`);
  });

  it('a header name that is not one is a config error', () => {
    expect(() => sourcesConfig([src({ url: `${base}/x`, total_header: 'X Total' })])).toThrow(/an HTTP header name such as X-Total-Count/);
  });
});

describe('locations show each page\'s paging position', () => {
  it('records of different pages have different locations; other query values stay redacted', async () => {
    const state = await read([src({ url: `${base}/adp/workers?$select=workers/associateOID&secret_key=abc`, items_path: 'workers', pagination: offset })]);
    expect([...state.members].map((m) => m.origin!.location)).toEqual([
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=0&%24top=2#$.workers[0]`,
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=0&%24top=2#$.workers[1]`,
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=2&%24top=2#$.workers[0]`,
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=2&%24top=2#$.workers[1]`,
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=4&%24top=2#$.workers[0]`,
      `${base}/adp/workers?%24select=[redacted]&secret_key=[redacted]&%24skip=4&%24top=2#$.workers[1]`,
    ]);
  });
});
