/**
 * Starts the emulator in-process on 127.0.0.1, port 0, for tests, and offers a small JSON request helper.
 * Signature kept stable: other areas' tests use it.
 */
import type { Clock } from '../../src/core/clock.js';
import { parseSeed, parseSeedText, startEmulator } from '../../src/index.js';
import type { EmulatorContext, Seed } from '../../src/index.js';
import type { FastifyInstance } from 'fastify';

/** Options of startTestEmulator. */
export interface TestEmulatorOptions {
  /** Turns on the /_emulator admin routes. */
  adminToken?: string;
  clock?: Clock;
  /** SQLite file (default in memory). */
  dbPath?: string;
  /** Also start the translation API (0: a free port). */
  translatePort?: number;
}

/** The answer of `TestEmulator.request`. */
export interface TestResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text when the body is not JSON, or undefined when empty. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A running test emulator. */
export interface TestEmulator {
  url: string;
  translateUrl?: string;
  ctx: EmulatorContext;
  app: FastifyInstance;
  close(): Promise<void>;
  /** Sends one request; `token` becomes `Authorization: Bearer <token>`, `body` is sent as JSON. */
  request(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
}

/** Starts an emulator with the given seed (raw object, parsed Seed, or YAML/JSON text). */
export async function startTestEmulator(seed: Record<string, unknown> | Seed | string, opts: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const parsed = typeof seed === 'string' ? parseSeedText(seed, 'test seed') : parseSeed(seed, 'test seed');
  const running = await startEmulator({
    seed: parsed,
    host: '127.0.0.1',
    port: 0,
    ...(opts.adminToken !== undefined ? { adminToken: opts.adminToken } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
    ...(opts.translatePort !== undefined ? { translatePort: opts.translatePort } : {}),
  });
  return {
    url: running.url,
    ...(running.translateUrl ? { translateUrl: running.translateUrl } : {}),
    ctx: running.ctx,
    app: running.app,
    close: () => running.close(),
    async request(method, path, ro = {}) {
      const headers: Record<string, string> = { ...ro.headers };
      if (ro.token !== undefined) headers.authorization = `Bearer ${ro.token}`;
      if (ro.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${running.url}${path}`, {
        method,
        headers,
        ...(ro.body !== undefined ? { body: JSON.stringify(ro.body) } : {}),
      });
      const text = await res.text();
      let body: unknown = undefined;
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      return { status: res.status, headers: res.headers, body };
    },
  };
}

/** Keys of `orgTestSeed()`. */
export const TEST_KEYS = {
  /** Tenant 1001 (Acme): read and write. */
  acmeRw: 'ek_acme_0123456789abcdef',
  /** Tenant 1001: read only. */
  acmeRead: 'ek_acmero_0123456789abcdef',
  /** Tenant 1001: write only. */
  acmeWrite: 'ek_acmewo_0123456789abcdef',
  /** Tenant 1001: no org scope. */
  acmeNone: 'ek_acmeno_0123456789abcdef',
  /** Tenant 2002 (Globex): read and write. */
  globexRw: 'ek_globex_0123456789abcdef',
} as const;

/** A two-tenant seed with limits off: Acme (1001, admin Ada) and Globex (2002). */
export function orgTestSeed(limits: { per_api_key?: number; per_session_token?: number; per_tenant?: number } = {}): Record<string, unknown> {
  return {
    tenants: [
      {
        id: 1001,
        name: 'Acme',
        api_keys: [
          { key: TEST_KEYS.acmeRw, scopes: ['tenant.org.read', 'tenant.org.write'] },
          { key: TEST_KEYS.acmeRead, scopes: ['tenant.org.read'] },
          { key: TEST_KEYS.acmeWrite, scopes: ['tenant.org.write'] },
          { key: TEST_KEYS.acmeNone, scopes: ['tenant.kb.read'] },
        ],
        members: [{ display_name: 'Ada Admin', email: 'ada@acme.test', phone: '+15550100', roles: ['tenant.admin'] }],
      },
      {
        id: 2002,
        name: 'Globex',
        api_keys: [{ key: TEST_KEYS.globexRw, scopes: ['tenant.org.read', 'tenant.org.write'] }],
        members: [],
      },
    ],
    limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0, ...limits },
  };
}
