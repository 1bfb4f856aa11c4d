/**
 * Error bodies. The spec describes two shapes and leaves open which endpoint uses which (beyond the token endpoint).
 * Our reading (the repository's docs/decisions.md):
 *   - organisation endpoints answer shape 2 only: { error: { code, message }, meta: { request_id } };
 *   - envelope endpoints (token, introspection, knowledge, memory, notification, chat, audit) answer shape 1 with the
 *     shape-2 fields alongside, so that a client reading either shape finds what it looks for:
 *     { success: false, code: 4040, message, traceId, error: { code, message }, meta: { request_id } }.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** HTTP status -> the numeric envelope code (4010, 4030, 4040 are the spec's; the rest follow the same pattern). */
export function envelopeCode(status: number): number {
  return status * 10;
}

/** The default shape-2 code of an HTTP status. */
export function defaultErrorCode(status: number): string {
  switch (status) {
    case 400: return 'invalid_argument';
    case 401: return 'invalid_api_key';
    case 403: return 'scope_denied';
    case 404: return 'not_found';
    case 409: return 'conflict';
    case 413: return 'payload_too_large';
    case 429: return 'rate_limited';
    case 502: return 'bad_gateway';
    case 503: return 'service_unavailable';
    default: return status >= 500 ? 'internal_error' : 'invalid_argument';
  }
}

/** A typed error a handler can throw; the core's error handler renders it in the route's shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Shorthands. */
export const badRequest = (message: string, code = 'invalid_argument') => new ApiError(400, code, message);
export const notFound = (message = 'not found', code = 'not_found') => new ApiError(404, code, message);
export const conflict = (message: string, code = 'conflict') => new ApiError(409, code, message);
export const forbidden = (message: string, code = 'scope_denied') => new ApiError(403, code, message);
export const unauthorized = (message: string, code = 'invalid_api_key') => new ApiError(401, code, message);

/**
 * `oauth` is the token endpoint's shape: shape 1 (as the spec says) with RFC 6749's `error` string and
 * `error_description` alongside, because OAuth client libraries (openid-client, oauth4webapi) read those.
 */
export type ErrorShape = 'org' | 'envelope' | 'oauth';

/** Our error codes -> the RFC 6749 section 5.2 codes OAuth clients expect. */
const OAUTH_ERROR_CODES: Record<string, string> = {
  invalid_client_credentials: 'invalid_client',
  invalid_argument: 'invalid_request',
};

/** The request id of this request (fastify's req.id), echoed as meta.request_id / traceId. */
export function requestId(req: FastifyRequest): string {
  return String(req.id);
}

/** Builds the body of an error in the given shape. */
export function errorBody(shape: ErrorShape, status: number, code: string, message: string, reqId: string): Record<string, unknown> {
  const shape2 = { error: { code, message }, meta: { request_id: reqId } };
  if (shape === 'org') return shape2;
  if (shape === 'oauth') {
    return { success: false, code: envelopeCode(status), message, traceId: reqId, data: null, error: OAUTH_ERROR_CODES[code] ?? code, error_description: message, meta: { request_id: reqId } };
  }
  return { success: false, code: envelopeCode(status), message, traceId: reqId, data: null, ...shape2 };
}

/** Sends an error in the given shape. */
export function sendError(reply: FastifyReply, shape: ErrorShape, status: number, code: string, message: string, headers: Record<string, string> = {}): FastifyReply {
  for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
  return reply.code(status).send(errorBody(shape, status, code, message, requestId(reply.request)));
}

/** A success envelope: { success: true, code: 200, message: 'OK', traceId, data }. */
export function envelope(req: FastifyRequest, data: unknown): Record<string, unknown> {
  return { success: true, code: 200, message: 'OK', traceId: requestId(req), data };
}
