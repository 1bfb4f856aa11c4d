import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { OrgsyncError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { redact, redactValue } from '../shared/redact.js';
import { guardPersonalRoute, routeClassOf, type GuardAnswer, type ReadAccess } from './route-access.js';
import { tlsReloader, type TlsFiles } from './listener-tls.js';

/** The answer of a readiness check: ready or not, with the reasons. */
export interface Readiness {
  ready: boolean;
  /** Each check by name: "ok" or what is wrong. */
  checks: Record<string, string>;
}

/** What the operations listener serves. */
export interface OpsHandlers {
  registry: Registry;
  /** /readyz: config loaded, state DB open, last run not failing for too long. */
  readiness(): Readiness;
  /** /status: a JSON document (the last runs with their summaries). */
  status(): unknown;
  /** /plan (HTML report) and /plan.json: the plan of the latest run, rendered; undefined before the first plan. */
  plan?(): LatestPlanView | undefined;
  /**
   * Routes served before the read-only ones (issue 22: POST /sync, GET /runs/<id>, GET /records/<selector>/history);
   * undefined: not one of them.
   */
  extra?(request: { method: string; path: string; query: URLSearchParams; authorization: string | undefined }): { status: number; body: unknown } | undefined;
  /** Issue 29: the read token of the personal routes (/plan, /plan.json, /runs/<id>, /records/<selector>/history). */
  access?: ReadAccess;
  /** Issue 29: serve HTTPS with these files (metrics.tls), reloaded when they change. */
  tls?: TlsFiles;
  /** Where TLS reloads are told. */
  logger?: Logger;
}

/**
 * The latest plan as the listener serves it: rendered already (`html`, `json`), or on request (`renderHtml`, and
 * `jsonChunks`: the text of /plan.json in chunks, as the CLI's `plan --output json` writes it; the JSON of a million
 * changes is longer than a string can be, so it is never one).
 */
export type LatestPlanView = { html: string; json: unknown } | { renderHtml(): string; jsonChunks(): Iterable<string> };

/** A started listener. */
export interface OpsServer {
  /** http://host:port it answers on. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Splits `host:port` (`[v6]:port` too) into its parts. */
export function parseListen(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return { host: host || '0.0.0.0', port: Number(listen.slice(at + 1)) };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Sends `chunks` as a 200 response, waiting for the socket to drain between writes (a reader slower than the
 * rendering holds at most one chunk in memory); stops when the client goes away.
 */
async function sendChunks(res: ServerResponse, contentType: string, chunks: Iterable<string>): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
  for (const chunk of chunks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
  }
  res.end();
}

/**
 * The answer to a request refused before any handler runs: a personal route without its token (a refused request
 * learns nothing, not even whether the run or record exists), then a path with malformed percent-encoding
 * (`/runs/%ZZ` names nothing: 400, never a 500 from a decoder further on).
 */
function refusedBeforeRouting(req: IncomingMessage, path: string, access: ReadAccess | undefined): GuardAnswer | undefined {
  const route = routeClassOf(req.method ?? 'GET', path);
  if (route.kind === 'personal') {
    const refused = guardPersonalRoute(access, route.route, req.headers.authorization);
    if (refused) return refused;
  }
  if (!decodable(path)) return { status: 400, body: { error: { code: 'bad_request', message: 'the path has malformed percent-encoding (a % must be followed by two hex digits of valid UTF-8)' } } };
  return undefined;
}

/** Whether `path` decodes as percent-encoded UTF-8. */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Serves /metrics (Prometheus text), /healthz (alive), /readyz (ready to do its job), /status (JSON) and the latest
 * plan (/plan as an HTML report, /plan.json) on node:http: a few read-only routes do not need a framework.
 */
export async function startOpsServer(listen: string, handlers: OpsHandlers): Promise<OpsServer> {
  const { host, port } = parseListen(listen);
  const onRequest: RequestListener = (req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { code: 'internal_error', message: redact(err instanceof Error ? err.message : String(err)) } });
      else res.destroy();
    });
  };
  const server = handlers.tls ? tlsServer(handlers.tls, handlers.logger, onRequest) : createServer(onRequest);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const refused = refusedBeforeRouting(req, path, handlers.access);
    if (refused) {
      req.resume();
      return json(res, refused.status, refused.body);
    }
    const answer = handlers.extra?.({ method: req.method ?? 'GET', path, query: new URL(req.url ?? '/', 'http://x').searchParams, authorization: req.headers.authorization });
    if (answer) {
      req.resume();
      return json(res, answer.status, redactValue(answer.body));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return json(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed` } });
    }
    switch (path) {
      case '/metrics':
        // Label values (a source name, an error kind) pass through the redactor like every other output.
        return send(res, 200, handlers.registry.contentType, redact(await handlers.registry.metrics()));
      case '/healthz':
        return json(res, 200, { status: 'ok' });
      case '/readyz': {
        const r = handlers.readiness();
        return json(res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', checks: redactValue(r.checks) });
      }
      case '/status':
        return json(res, 200, redactValue(handlers.status()));
      case '/plan':
      case '/plan.json': {
        const latest = handlers.plan?.();
        if (!latest) return json(res, 404, { error: { code: 'no_plan', message: 'no run has planned yet; try again after the first run' } });
        // The report is a self-contained page; its CSP forbids every fetch, so it stays offline in a browser too.
        if (path === '/plan') return send(res, 200, 'text/html; charset=utf-8', 'html' in latest ? latest.html : latest.renderHtml());
        if ('json' in latest) return json(res, 200, latest.json);
        return sendChunks(res, 'application/json; charset=utf-8', req.method === 'HEAD' ? [] : latest.jsonChunks());
      }
      default:
        return json(res, 404, { error: { code: 'not_found', message: `no route ${path}; try /metrics, /healthz, /readyz, /status, /plan or /plan.json` } });
    }
  };
  // Keep-alive sockets from scrapers must not hold a stopping daemon open.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(new OrgsyncError('CONFIG_INVALID', `metrics.listen: cannot listen on ${listen}: ${err.code ?? err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `${handlers.tls ? 'https' : 'http'}://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${addr.port}`,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An HTTPS server whose certificate is read again, before a connection's handshake, when its files changed. */
function tlsServer(files: TlsFiles, logger: Logger | undefined, onRequest: RequestListener): ReturnType<typeof createHttpsServer> {
  const reloader = tlsReloader(files, logger);
  const server = createHttpsServer(reloader.initial, onRequest);
  // Prepended: node creates the connection's TLS socket from the server's context in its own 'connection' listener.
  server.prependListener('connection', () => reloader.refresh(server));
  return server;
}
