/**
 * A loopback HTTP proxy in front of the emulator that injects network faults and logs every request it receives:
 * - `latency`: hold requests before forwarding (dropped unforwarded when the client gives up meanwhile),
 * - `status`: answer with a status (502/503/504) instead of forwarding,
 * - `reset`: destroy each new connection as soon as it is accepted, before any request was read,
 * - `refuse`: stop listening, so connections are refused, until `accept()`,
 * - `stall`: read requests and never answer.
 * The log says when each request arrived (before any fault), so a test can tell what a process sent after a moment.
 * Reusable by every fault test: start one per process under test to tell their requests apart.
 */
import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One request that reached the proxy. */
export interface ProxiedRequest {
  /** Arrival (Date.now()) of its headers. */
  at: number;
  method: string;
  path: string;
  /** What became of it: forwarded (with the target's status), answered by a fault, or dropped. */
  outcome: 'pending' | 'forwarded' | 'faulted' | 'dropped';
  status?: number;
}

/** A fault applied to requests (those matching `methods`, when given). */
export type ProxyFault =
  | { kind: 'latency'; ms: number; methods?: string[]; paths?: RegExp }
  | { kind: 'status'; status: number; methods?: string[]; paths?: RegExp }
  | { kind: 'stall'; methods?: string[]; paths?: RegExp }
  | { kind: 'reset' };

/** The write methods (faults that only slow or fail writes). */
export const WRITES = ['POST', 'PATCH', 'PUT', 'DELETE'];

/** A running fault proxy. */
export class FaultProxy {
  readonly requests: ProxiedRequest[] = [];
  private fault: ProxyFault | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly agent = new Agent({ keepAlive: true });
  private readonly held = new Set<() => void>();
  private listening = true;

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
    readonly port: number,
  ) {}

  /** Starts a proxy to `target` (e.g. the emulator's URL) on 127.0.0.1, on a free port. */
  static async start(target: string): Promise<FaultProxy> {
    const server = createServer();
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const proxy = new FaultProxy(server, new URL(target), address.port);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.handle(req, res));
    server.on('connection', (socket: Socket) => proxy.onConnection(socket));
    return proxy;
  }

  /** The proxy's base URL (what the process under test is configured with). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Sets the fault (undefined: pass everything through). */
  set(fault: ProxyFault | undefined): void {
    this.fault = fault;
  }

  /** Requests that arrived, optionally only writes. */
  count(opts: { writes?: boolean; since?: number } = {}): number {
    return this.requests.filter((r) => (!opts.writes || WRITES.includes(r.method)) && (opts.since === undefined || r.at >= opts.since)).length;
  }

  /** Refuses connections: closes the listener and resets every open connection. */
  async refuse(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Resets every open connection (keep-alive ones included), so the next request needs a new connection. */
  dropConnections(): void {
    for (const s of this.sockets) s.resetAndDestroy();
  }

  /** Listens again on the same port after `refuse()`. */
  async accept(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.listening = true;
  }

  async close(): Promise<void> {
    for (const release of this.held) release();
    await this.refuse();
    this.agent.destroy();
  }

  private onConnection(socket: Socket): void {
    if (this.fault?.kind === 'reset') {
      socket.resetAndDestroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const entry: ProxiedRequest = { at: Date.now(), method: req.method ?? 'GET', path: req.url ?? '/', outcome: 'pending' };
    this.requests.push(entry);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void this.route(entry, req, res, Buffer.concat(chunks)));
  }

  private async route(entry: ProxiedRequest, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const fault = this.fault;
    const applies = fault && fault.kind !== 'reset' && (!fault.methods || fault.methods.includes(entry.method)) && (!fault.paths || fault.paths.test(entry.path));
    if (applies && fault.kind === 'status') {
      entry.outcome = 'faulted';
      entry.status = fault.status;
      res.writeHead(fault.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'proxy_fault', message: `injected ${fault.status}` } }));
      return;
    }
    if (applies && fault.kind === 'stall') {
      entry.outcome = 'faulted';
      return;
    }
    if (applies && fault.kind === 'latency') {
      const gone = await this.hold(fault.ms, res);
      if (gone) {
        entry.outcome = 'dropped';
        return;
      }
    }
    const upstream = httpRequest(
      { host: this.target.hostname, port: this.target.port, method: entry.method, path: entry.path, headers: { ...req.headers, host: this.target.host }, agent: this.agent },
      (up) => {
        entry.outcome = 'forwarded';
        entry.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      entry.outcome = 'dropped';
      res.destroy();
    });
    upstream.end(body);
  }

  /** Waits `ms`; true when the client went away meanwhile (the request is then never forwarded). */
  private hold(ms: number, res: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (gone: boolean) => {
        clearTimeout(timer);
        res.off('close', onClose);
        this.held.delete(release);
        resolve(gone);
      };
      const onClose = () => done(true);
      const release = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      res.once('close', onClose);
      this.held.add(release);
    });
  }
}
