/**
 * The auth area's SQLite tables: signing keys, session tokens, authorization codes, refresh tokens and user login
 * tokens. Secrets are never stored: only their SHA-256 (session tokens keep a public prefix to find the row, then
 * the hash is compared in constant time). Times are epoch milliseconds from the emulator's Clock.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';

/** SHA-256 of a secret, as stored. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const presented = hashSecret(secret);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}

/** Creates the auth tables (idempotent). */
export function migrateAuth(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS auth_signing_keys (
      kid TEXT PRIMARY KEY,
      status TEXT NOT NULL CHECK (status IN ('active', 'retiring')),
      private_jwk TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS auth_session_tokens (
      id TEXT PRIMARY KEY,
      prefix TEXT NOT NULL UNIQUE,
      secret_hash BLOB NOT NULL,
      tenant_id INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      grant_type TEXT NOT NULL,
      capabilities TEXT NOT NULL,
      bound_agent_id TEXT,
      bound_account_id TEXT,
      issued_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      revoked INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS auth_codes (
      code_hash BLOB PRIMARY KEY,
      tenant_id INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      account_id TEXT NOT NULL,
      redirect_uri TEXT NOT NULL,
      nonce TEXT,
      scope TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      used INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
      token_hash BLOB PRIMARY KEY,
      tenant_id INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      account_id TEXT NOT NULL,
      scope TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      used INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS auth_login_tokens (
      token_hash BLOB PRIMARY KEY,
      session_uuid TEXT NOT NULL,
      tenant_id INTEGER NOT NULL,
      account_id TEXT NOT NULL,
      issued_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      revoked INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS auth_account_numbers (
      number INTEGER PRIMARY KEY AUTOINCREMENT,
      account_uuid TEXT NOT NULL UNIQUE
    );
    CREATE TABLE IF NOT EXISTS auth_revoked_access_tokens (
      jti TEXT PRIMARY KEY,
      expires_at INTEGER NOT NULL
    );
  `);
}

/** A stored signing key. */
export interface KeyRow { kid: string; status: 'active' | 'retiring'; private_jwk: string; created_at: number }
/** A stored session token (without its secret). */
export interface SessionTokenRow {
  id: string; prefix: string; secret_hash: Buffer; tenant_id: number; client_id: string;
  grant_type: 'client_credentials' | 'runtime_access'; capabilities: string;
  bound_agent_id: string | null; bound_account_id: string | null; issued_at: number; expires_at: number; revoked: number;
}
/** A stored authorization code. */
export interface CodeRow {
  tenant_id: number; client_id: string; account_id: string; redirect_uri: string; nonce: string | null; scope: string; expires_at: number; used: number;
}
/** A stored refresh token. */
export interface RefreshRow { tenant_id: number; client_id: string; account_id: string; scope: string; expires_at: number; used: number }
/** A stored user login token. */
export interface LoginTokenRow { session_uuid: string; tenant_id: number; account_id: string; issued_at: number; expires_at: number; revoked: number }

/** Prepared statements over the auth tables. */
export class AuthStore {
  private readonly s;

  constructor(private readonly db: Database.Database) {
    this.s = {
      keys: db.prepare<[], KeyRow>('SELECT * FROM auth_signing_keys ORDER BY created_at DESC, rowid DESC'),
      insertKey: db.prepare('INSERT INTO auth_signing_keys (kid, status, private_jwk, created_at) VALUES (?, ?, ?, ?)'),
      setKeyStatus: db.prepare('UPDATE auth_signing_keys SET status = ? WHERE kid = ?'),
      deleteKey: db.prepare('DELETE FROM auth_signing_keys WHERE kid = ?'),
      insertSession: db.prepare(`INSERT INTO auth_session_tokens
        (id, prefix, secret_hash, tenant_id, client_id, grant_type, capabilities, bound_agent_id, bound_account_id, issued_at, expires_at)
        VALUES (@id, @prefix, @secret_hash, @tenant_id, @client_id, @grant_type, @capabilities, @bound_agent_id, @bound_account_id, @issued_at, @expires_at)`),
      sessionByPrefix: db.prepare<[string], SessionTokenRow>('SELECT * FROM auth_session_tokens WHERE prefix = ?'),
      revokeSession: db.prepare('UPDATE auth_session_tokens SET revoked = 1 WHERE id = ?'),
      insertCode: db.prepare(`INSERT INTO auth_codes (code_hash, tenant_id, client_id, account_id, redirect_uri, nonce, scope, expires_at)
        VALUES (@code_hash, @tenant_id, @client_id, @account_id, @redirect_uri, @nonce, @scope, @expires_at)`),
      codeByHash: db.prepare<[Buffer], CodeRow>('SELECT * FROM auth_codes WHERE code_hash = ?'),
      useCode: db.prepare('UPDATE auth_codes SET used = 1 WHERE code_hash = ? AND used = 0'),
      insertRefresh: db.prepare(`INSERT INTO auth_refresh_tokens (token_hash, tenant_id, client_id, account_id, scope, expires_at)
        VALUES (@token_hash, @tenant_id, @client_id, @account_id, @scope, @expires_at)`),
      refreshByHash: db.prepare<[Buffer], RefreshRow>('SELECT * FROM auth_refresh_tokens WHERE token_hash = ?'),
      useRefresh: db.prepare('UPDATE auth_refresh_tokens SET used = 1 WHERE token_hash = ? AND used = 0'),
      insertLogin: db.prepare(`INSERT INTO auth_login_tokens (token_hash, session_uuid, tenant_id, account_id, issued_at, expires_at)
        VALUES (@token_hash, @session_uuid, @tenant_id, @account_id, @issued_at, @expires_at)`),
      loginByHash: db.prepare<[Buffer], LoginTokenRow>('SELECT * FROM auth_login_tokens WHERE token_hash = ?'),
      revokeLogin: db.prepare('UPDATE auth_login_tokens SET revoked = 1 WHERE token_hash = ?'),
      accountNumber: db.prepare<[string], { number: number }>('SELECT number FROM auth_account_numbers WHERE account_uuid = ?'),
      insertAccountNumber: db.prepare('INSERT OR IGNORE INTO auth_account_numbers (account_uuid) VALUES (?)'),
      revokeJti: db.prepare('INSERT OR IGNORE INTO auth_revoked_access_tokens (jti, expires_at) VALUES (?, ?)'),
      jtiRevoked: db.prepare<[string], { jti: string }>('SELECT jti FROM auth_revoked_access_tokens WHERE jti = ?'),
    };
  }

  /** Signing keys, newest first. */
  keys(): KeyRow[] {
    return this.s.keys.all();
  }

  /** Makes `kid` the active key; the former active key retires and any older retiring key is dropped. */
  rotateTo(kid: string, privateJwk: string, now: number): void {
    this.db.transaction(() => {
      for (const k of this.keys()) {
        if (k.status === 'retiring') this.s.deleteKey.run(k.kid);
        else this.s.setKeyStatus.run('retiring', k.kid);
      }
      this.s.insertKey.run(kid, 'active', privateJwk, now);
    })();
  }

  /** Adds a key in the given status (first start: an active and a retiring key). */
  addKey(kid: string, status: 'active' | 'retiring', privateJwk: string, createdAt: number): void {
    this.s.insertKey.run(kid, status, privateJwk, createdAt);
  }

  /** Removes a key from the set; false when there was none. */
  deleteKey(kid: string): boolean {
    return this.s.deleteKey.run(kid).changes > 0;
  }

  insertSessionToken(row: Omit<SessionTokenRow, 'revoked'>): void {
    this.s.insertSession.run(row);
  }

  sessionTokenByPrefix(prefix: string): SessionTokenRow | undefined {
    return this.s.sessionByPrefix.get(prefix);
  }

  revokeSessionToken(id: string): void {
    this.s.revokeSession.run(id);
  }

  insertCode(row: CodeRow & { code_hash: Buffer }): void {
    const { used: _used, ...rest } = row;
    this.s.insertCode.run(rest);
  }

  codeByHash(hash: Buffer): CodeRow | undefined {
    return this.s.codeByHash.get(hash);
  }

  /** Marks a code used; false when it was used already (a concurrent exchange lost). */
  consumeCode(hash: Buffer): boolean {
    return this.s.useCode.run(hash).changes === 1;
  }

  insertRefreshToken(row: Omit<RefreshRow, 'used'> & { token_hash: Buffer }): void {
    this.s.insertRefresh.run(row);
  }

  refreshTokenByHash(hash: Buffer): RefreshRow | undefined {
    return this.s.refreshByHash.get(hash);
  }

  /** Marks a refresh token used; false when it was used already. */
  consumeRefreshToken(hash: Buffer): boolean {
    return this.s.useRefresh.run(hash).changes === 1;
  }

  insertLoginToken(row: Omit<LoginTokenRow, 'revoked'> & { token_hash: Buffer }): void {
    this.s.insertLogin.run(row);
  }

  loginTokenByHash(hash: Buffer): LoginTokenRow | undefined {
    return this.s.loginByHash.get(hash);
  }

  /** Revokes a login token; false when it is unknown. */
  revokeLoginToken(hash: Buffer): boolean {
    return this.s.revokeLogin.run(hash).changes > 0;
  }

  /** Revokes an application access JWT by its jti. */
  revokeAccessToken(jti: string, expiresAt: number): void {
    this.s.revokeJti.run(jti, expiresAt);
  }

  /** True when the access JWT with this jti was revoked. */
  accessTokenRevoked(jti: string): boolean {
    return this.s.jtiRevoked.get(jti) !== undefined;
  }

  /** The platform-style integer id of an account (introspection's account_id), assigned on first use. */
  accountNumber(accountUuid: string): number {
    this.s.insertAccountNumber.run(accountUuid);
    return this.s.accountNumber.get(accountUuid)!.number;
  }

  /** Runs `fn` in one transaction. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
