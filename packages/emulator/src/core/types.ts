/**
 * The emulator's internal contracts. Every API area (org, auth, kb/memory/messaging/audit, translate) is an
 * EmulatorArea that the core wires into one fastify app over one SQLite store. The emulator imports nothing
 * of the sync: no import leaves packages/emulator (the import-direction lint rule checks it).
 */
import type Database from 'better-sqlite3';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Seed } from './seed.js';

/** What kind of credential authenticated a request. */
export type CredentialKind = 'api_key' | 'session_token' | 'app_token';

/** The authenticated caller of a business request. */
export interface Principal {
  kind: CredentialKind;
  tenantId: number;
  /**
   * What the credential may do, as scope names. ek_: its `tenant.*` scopes. st_: the `tenant.*` scopes derived
   * from its capabilities (org.read -> tenant.org.read, kb.read -> tenant.kb.read, memory.read -> tenant.memory.read, ...).
   * Application JWT: `kb.read` and/or `contacts.read`.
   */
  scopes: ReadonlySet<string>;
  /** Stable id of this credential, for per-credential rate limits (never the secret itself). */
  credentialId: string;
  /** Session tokens: which grant issued it. */
  grant?: 'client_credentials' | 'runtime_access';
  clientId?: string;
  boundAgentId?: string;
  boundAccountId?: string;
  /** Application tokens: the account the token acts for. */
  accountId?: string;
  /** True for an administrator credential (e.g. an admin JWT): refused by notification and chat endpoints. */
  admin?: boolean;
}

/** Turns a bearer token into a Principal. Areas add resolvers (auth adds st_ and JWT). */
export interface CredentialResolver {
  /** True when this resolver owns tokens of this shape (by prefix or format). */
  matches(token: string): boolean;
  /** The principal, or the shape-2 error code to answer 401 with. */
  resolve(token: string): Principal | { error: 'invalid_api_key' | 'invalid_session_token' | 'invalid_client_credentials' | 'invalid_token' };
}

/** A member of a tenant, as the org area keeps it; other areas look members up through OrgDirectory. */
export interface DirectoryMember {
  account_id: string;
  tenant_id: number;
  display_name: string;
  email: string;
  phone: string;
  status: 'active' | 'invited' | 'suspended' | 'left';
  roles: string[];
}

/** The org area's read interface for the other areas (auth codes by e-mail, notification targets, ...). */
export interface OrgDirectory {
  memberByAccountId(tenantId: number, accountId: string): DirectoryMember | undefined;
  memberByEmail(tenantId: number, email: string): DirectoryMember | undefined;
}

/** A digital employee (agent), from the seed. */
export interface Agent {
  id: string;
  tenant_id: number;
  name: string;
  status: 'active' | 'deleted';
  /** `all`, or the e-mails of the members who can see it. */
  visible_to: 'all' | string[];
  /** Ids of the knowledge bases associated with the agent. */
  knowledge_base_ids: string[];
}

/** Shared services handed to every area. */
export interface EmulatorContext {
  db: Database.Database;
  clock: Clock;
  seed: Seed;
  /** Register a resolver for a new credential kind. */
  credentials: { add(resolver: CredentialResolver): void; resolve(token: string): ReturnType<CredentialResolver['resolve']> | undefined };
  /** Filled by the org area during its setup; available to other areas' handlers at request time. */
  directory: OrgDirectory;
  agents: { byId(tenantId: number, id: string): Agent | undefined; list(tenantId: number): Agent[] };
  /** The admin token (`--admin-token`), or undefined when admin routes are off. */
  adminToken: string | undefined;
  /** The base URL the server is reachable at, once listening (used for issuer, jwks_uri). */
  baseUrl(): string;
  /** Fault switches that areas read (e.g. `jwks_unavailable`, `memory_scope_failure:session`, `chat_delivery_failure`). */
  switches: Map<string, unknown>;
  /**
   * A hook implementing RouteAuth: resolves the bearer credential into `req.principal`, applies the per-credential and
   * per-tenant rate limits, checks the scope. Use it as the route's `onRequest` (or `preHandler`) hook.
   */
  authorize(auth: RouteAuth): (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** Token buckets (per second, burst = rate) for limits of an area's own (e.g. the token endpoint per client_id). */
  rateLimiter: RateLimiter;
  /** The emulator's logger (never log secrets). */
  logger: Logger;
}

/** Token buckets keyed by any string. */
export interface RateLimiter {
  /**
   * Takes one token from each of the buckets (all or none). Returns 0 when allowed, else the advised back-off in whole
   * seconds (>= 1). A rate of 0 means that bucket is off.
   */
  take(buckets: { key: string; ratePerSecond: number }[]): number;
  /**
   * As `take`, and also says which buckets refused (their keys, in the order given; empty when allowed), so that a
   * 429 can name the limit it hit (docs/decisions.md: "Which limit a 429 names").
   */
  takeOrRefuse(buckets: { key: string; ratePerSecond: number }[]): { retryAfterSeconds: number; refused: string[] };
}

/** One API area of the emulator. */
export interface EmulatorArea {
  name: string;
  /** Creates the area's tables (idempotent: CREATE TABLE IF NOT EXISTS, or numbered migrations of its own). */
  migrate(db: Database.Database): void;
  /** Applies the seed (idempotent across restarts with a --db file). */
  applySeed?(ctx: EmulatorContext): void;
  /** Registers the area's routes on the tenant API app. */
  routes(app: FastifyInstance, ctx: EmulatorContext): void | Promise<void>;
  /** Registers the area's `/_emulator/*` admin routes; called only when an admin token is set (the core checks the token). */
  adminRoutes?(app: FastifyInstance, ctx: EmulatorContext): void | Promise<void>;
}

/** Per-route credential requirements, checked by the core's `authorize` preHandler. */
export interface RouteAuth {
  /** Scope required of an ek_ key (undefined: ek_ refused with 403 scope_denied). An array means "any one of". */
  apiKey?: string | string[];
  /** Scope required of a st_ token (undefined: refused). */
  sessionToken?: string | string[];
  /** Scope required of an application JWT (undefined: refused). */
  appToken?: string | string[];
  /** Restrict session tokens to one grant (knowledge/retrieve: runtime_access). */
  sessionGrant?: 'client_credentials' | 'runtime_access';
  /** The error body shape for this route's errors. */
  shape: 'org' | 'envelope';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, set by `ctx.authorize(...)`. */
    principal?: Principal;
    /** The error body shape of this request, set by `ctx.authorize(...)` (falls back to the route config / URL). */
    errorShape?: 'org' | 'envelope' | 'oauth';
  }
  interface FastifyContextConfig {
    /** The error body shape of the route (optional; `ctx.authorize` sets it per request too). */
    errorShape?: 'org' | 'envelope' | 'oauth';
  }
}

export type { FastifyReply, FastifyRequest };
