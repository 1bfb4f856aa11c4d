/**
 * Request validation for the knowledge / memory / messaging / audit routes: zod at the boundary, and one clear
 * 400 `invalid_argument` line naming the field ("top_k: must be at most 50", "unknown property: foo").
 */
import type { z } from 'zod';
import { ApiError, badRequest } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import type { FastifyRequest } from 'fastify';

/** `a.b[0].c` from a zod issue path. */
function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Parses `value` with `schema`, or throws a 400 naming the first problem (prefixed with `where`, e.g. "query"). */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, where = ''): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw badRequest('invalid request');
  const prefix = (p: string): string => [where, p].filter((x) => x !== '').join('.');
  if (issue.code === 'unrecognized_keys') {
    throw badRequest(`unknown property: ${issue.keys.map((k) => prefix(pathOf([...issue.path, k]))).join(', ')}`);
  }
  const field = prefix(pathOf(issue.path));
  throw badRequest(`${field === '' ? 'body' : field}: ${issue.message}`);
}

/** A zod error map for strings: "required" when absent, "must be a string" when of another type. */
export const stringError = { error: (issue: { input?: unknown }): string => (issue.input === undefined ? 'required' : 'must be a string') };

/** The principal set by the core's authorize hook (a route without one is a wiring mistake). */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new ApiError(500, 'internal_error', 'route is missing its authorize hook');
  return req.principal;
}

/** The account a credential acts for, if any: an application token's subject or a session token's bound account. */
export function callerAccount(p: Principal): string | undefined {
  return p.accountId ?? p.boundAccountId;
}
