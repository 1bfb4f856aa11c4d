/**
 * Application tokens: the RS256 access JWT and the OpenID ID token, signed with jose; and the synchronous check of
 * an access JWT presented as a Bearer credential (the core's credential resolvers are synchronous, so the RS256
 * signature is checked with node:crypto against the listed public key, after jose decodes header and claims).
 */
import { randomUUID, verify } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { SigningKeys } from './keys.js';

/** The media type of the access JWT's `typ` header (RFC 9068); an ID token is never accepted as an access token. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/** Claims of the application access JWT (the spec leaves them open; README "Authentication" lists them). */
export interface AccessClaims {
  iss: string;
  sub: string;
  aud: string;
  client_id: string;
  scope: string;
  tenant_id: number;
  iat: number;
  exp: number;
  jti: string;
}

/** What goes into an ID token beyond the registered claims. */
export interface IdTokenProfile {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  phone_number: string;
  tenant: { id: number; name: string };
  membership: { status: string; roles: string[] };
  svc_context: { client_id: string; client_kind: string; environment: string };
}

/** Signs an access JWT with the active key. */
export async function signAccessToken(keys: SigningKeys, claims: Omit<AccessClaims, 'jti'>): Promise<string> {
  const key = await keys.active();
  const { iss, sub, aud, iat, exp, ...rest } = claims;
  return new SignJWT({ ...rest })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: ACCESS_TOKEN_TYP })
    .setIssuer(iss)
    .setSubject(sub)
    .setAudience(aud)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(key.privateKey);
}

/** Signs an ID token with the active key; `nonce` only when the authorization request carried one. */
export async function signIdToken(
  keys: SigningKeys,
  opts: { issuer: string; audience: string; iat: number; exp: number; nonce: string | undefined; profile: IdTokenProfile },
): Promise<string> {
  const key = await keys.active();
  const { sub, ...profile } = opts.profile;
  const payload: Record<string, unknown> = { ...profile, auth_time: opts.iat };
  if (opts.nonce !== undefined) payload.nonce = opts.nonce;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setSubject(sub)
    .setAudience(opts.audience)
    .setIssuedAt(opts.iat)
    .setExpirationTime(opts.exp)
    .sign(key.privateKey);
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** True when a bearer token has the shape of a JWS compact JWT. */
export function looksLikeJwt(token: string): boolean {
  return token.startsWith('eyJ') && JWT_SHAPE.test(token);
}

/**
 * The claims of a valid access JWT: RS256 signature by a listed key, typ at+jwt, our issuer, not expired.
 * Undefined for anything else (a forged, expired or foreign token, an ID token, a token whose key left the set).
 */
export function verifyAccessToken(token: string, keys: SigningKeys, issuer: string, nowMs: number): AccessClaims | undefined {
  if (!looksLikeJwt(token)) return undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'RS256' || header.typ !== ACCESS_TOKEN_TYP || typeof header.kid !== 'string') return undefined;
    const key = keys.byKid(header.kid);
    if (!key) return undefined;
    const [h, p, s] = token.split('.') as [string, string, string];
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key.publicKey, Buffer.from(s, 'base64url'))) return undefined;
    const claims = decodeJwt(token) as Partial<AccessClaims>;
    if (claims.iss !== issuer || typeof claims.exp !== 'number' || claims.exp * 1000 <= nowMs) return undefined;
    if (typeof claims.tenant_id !== 'number' || typeof claims.sub !== 'string' || typeof claims.scope !== 'string') return undefined;
    return claims as AccessClaims;
  } catch {
    return undefined;
  }
}
