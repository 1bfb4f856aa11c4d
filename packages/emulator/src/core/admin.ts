/**
 * The core's `/_emulator` admin routes (only registered with an admin token): fault injection and request counts.
 * Faults and counts apply to every route except the `/_emulator` routes themselves.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, defaultErrorCode, sendError } from './errors.js';
import { bearerToken, hashSecret } from './credentials.js';
import { formatIssuePath } from './seed-file.js';
import type { EmulatorContext } from './types.js';

/** The body of PUT /_emulator/faults (every field optional). */
export const faultConfigSchema = z.strictObject({
  /** Chance (0..1) that a matching request is answered with one of `statuses` instead of being handled. */
  probability: z.number().min(0).max(1).default(0),
  /** Statuses an injected fault answers with, picked uniformly. */
  statuses: z.array(z.number().int().min(400).max(599)).min(1).default([500, 503]),
  /** Chance (0..1) that a matching request's connection is destroyed without an answer. */
  reset_probability: z.number().min(0).max(1).default(0),
  /** Added latency in ms, uniform in [min, max] (or one fixed number), for every matching request. */
  latency_ms: z.union([z.tuple([z.number().min(0), z.number().min(0)]), z.number().min(0)]).default(0),
  /** HTTP methods the faults apply to (all when absent). */
  methods: z.array(z.string().min(1)).optional(),
  /** A regular expression the request path must match (all paths when absent). */
  paths: z.string().optional(),
});

/** A parsed fault configuration. */
export type FaultConfig = z.infer<typeof faultConfigSchema>;

interface ActiveFaults {
  config: FaultConfig;
  methods: Set<string> | undefined;
  paths: RegExp | undefined;
}

/** Fault state and request counts of one emulator. */
export class FaultsAndCounts {
  private faults: ActiveFaults | undefined;
  private counts = new Map<string, { method: string; route: string; status: number; count: number }>();

  constructor(private readonly ctx: EmulatorContext) {}

  /** True for the admin routes, which faults and counts leave out. */
  static isAdminPath(url: string): boolean {
    return url === '/_emulator' || url.startsWith('/_emulator/');
  }

  set(config: FaultConfig): void {
    let paths: RegExp | undefined;
    if (config.paths !== undefined) {
      try {
        paths = new RegExp(config.paths);
      } catch {
        throw new ApiError(400, 'invalid_argument', 'paths: not a valid regular expression');
      }
    }
    this.faults = { config, methods: config.methods ? new Set(config.methods.map((m) => m.toUpperCase())) : undefined, paths };
  }

  clear(): void {
    this.faults = undefined;
  }

  /** onRequest hook: latency, connection resets and injected statuses. Handled requests never see an injected fault. */
  async inject(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const active = this.faults;
    if (!active) return;
    const path = req.url.split('?')[0] ?? req.url;
    if (FaultsAndCounts.isAdminPath(path)) return;
    if (active.methods && !active.methods.has(req.method)) return;
    if (active.paths && !active.paths.test(path)) return;
    const { config } = active;
    const [min, max] = Array.isArray(config.latency_ms) ? config.latency_ms : [config.latency_ms, config.latency_ms];
    const delay = min + Math.random() * Math.max(0, max - min);
    if (delay > 0) await this.ctx.clock.sleep(delay);
    if (Math.random() < config.reset_probability) {
      req.raw.socket?.destroy();
      reply.hijack();
      return;
    }
    if (Math.random() < config.probability) {
      const status = config.statuses[Math.floor(Math.random() * config.statuses.length)] ?? 500;
      const code = defaultErrorCode(status);
      const headers: Record<string, string> = status === 429 ? { 'retry-after': '1' } : {};
      const shape = path.startsWith('/api/external/v1/org/') ? 'org' : 'envelope';
      req.errorShape = req.errorShape ?? shape;
      sendError(reply, req.errorShape, status, code, 'injected fault', headers);
      return reply as unknown as undefined;
    }
  }

  /** onResponse hook: counts one row per method, route template and status. */
  count(req: FastifyRequest, reply: FastifyReply): void {
    const path = req.url.split('?')[0] ?? req.url;
    if (FaultsAndCounts.isAdminPath(path)) return;
    const route = req.routeOptions.url ?? path;
    const key = `${req.method} ${route} ${reply.statusCode}`;
    const row = this.counts.get(key);
    if (row) row.count += 1;
    else this.counts.set(key, { method: req.method, route, status: reply.statusCode, count: 1 });
  }

  requests(): { method: string; route: string; status: number; count: number }[] {
    return [...this.counts.values()].map((r) => ({ ...r }));
  }

  resetCounts(): void {
    this.counts.clear();
  }
}

/** Registers the token check and the core's admin routes on an encapsulated admin instance. */
export function registerCoreAdminRoutes(admin: FastifyInstance, ctx: EmulatorContext, faults: FaultsAndCounts): void {
  const expected = hashSecret(ctx.adminToken ?? '');
  admin.addHook('onRequest', async (req) => {
    req.errorShape = 'org';
    const token = bearerToken(req);
    if (token === undefined || !timingSafeEqual(hashSecret(token), expected)) {
      throw new ApiError(401, 'invalid_api_key', 'the admin routes need Authorization: Bearer <admin token>');
    }
  });
  admin.put('/_emulator/faults', async (req) => {
    const parsed = faultConfigSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const message = issue?.code === 'unrecognized_keys' ? `unknown property: ${issue.keys.join(', ')}` : `${formatIssuePath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}`;
      throw new ApiError(400, 'invalid_argument', message);
    }
    faults.set(parsed.data);
    return { faults: parsed.data };
  });
  admin.delete('/_emulator/faults', async (_req, reply) => {
    faults.clear();
    return reply.code(204).send();
  });
  admin.get('/_emulator/requests', async () => ({ requests: faults.requests() }));
  // Revokes a tenant's ek_ key while running (until a restart re-applies the seed): from the next request on it is
  // 401 invalid_api_key, as an unknown key is.
  const revokeKey = ctx.db.prepare('DELETE FROM emu_api_keys WHERE key_hash = ?');
  admin.post('/_emulator/api-keys/revoke', async (req) => {
    const body = req.body as { key?: unknown } | undefined;
    if (!body || typeof body !== 'object' || typeof body.key !== 'string' || body.key === '') throw new ApiError(400, 'invalid_argument', 'key: required (the full ek_ key)');
    if (revokeKey.run(hashSecret(body.key)).changes === 0) throw new ApiError(404, 'not_found', 'no such API key');
    return { revoked: true };
  });
  admin.delete('/_emulator/requests', async (_req, reply) => {
    faults.resetCounts();
    return reply.code(204).send();
  });
}
