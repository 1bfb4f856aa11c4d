/**
 * Ids and small shared helpers of the knowledge / memory / messaging / audit areas.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

/** A UUID-shaped id derived from a name, so that seeding the same seed twice gives the same ids. */
export function stableUuid(name: string): string {
  const h = createHash('sha256').update(name, 'utf8').digest('hex');
  // Version 5-style layout (name-based), variant 10xx.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** 8-4-4-4-12 hex (the spec's "UUID strings"); case-insensitive. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID-shaped string. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * The platform-style integer ids of accounts (a KB's owner_account_id). They live in the auth area's table
 * `auth_account_numbers` (numbers assigned on first use), so a number equals introspection's account_id.
 * The DDL here is identical to the auth area's, so either area may create the table first.
 */
export class AccountNumbers {
  private readonly insert: Database.Statement<[string]>;
  private readonly select: Database.Statement<[string], { number: number }>;

  constructor(db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS auth_account_numbers (
      number INTEGER PRIMARY KEY AUTOINCREMENT,
      account_uuid TEXT NOT NULL UNIQUE
    );`);
    this.insert = db.prepare('INSERT OR IGNORE INTO auth_account_numbers (account_uuid) VALUES (?)');
    this.select = db.prepare('SELECT number FROM auth_account_numbers WHERE account_uuid = ?');
  }

  /** The number of an account (assigned now when it has none). */
  of(accountUuid: string): number {
    this.insert.run(accountUuid);
    return this.select.get(accountUuid)!.number;
  }
}

/** RFC 3339 with milliseconds, UTC. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Length in characters (Unicode code points), as the spec counts text lengths. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}
