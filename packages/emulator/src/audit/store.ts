/**
 * The audit log: one record per cross-user audit call (event type `tenant.admin.user_kb_inspect`): who (the
 * credential), whom (the inspected user), what (the action, the KB, the outcome), when. Metadata only, never content.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { isoTime } from '../kb/ids.js';

/** The event type of cross-user KB reads. */
export const USER_KB_INSPECT = 'tenant.admin.user_kb_inspect';

/** Who made an audited call. */
export interface AuditActor {
  credential_kind: string;
  credential_id: string;
  client_id?: string;
  account_id?: string;
}

/** One audit record as the admin route returns it. */
export interface AuditRecord {
  id: string;
  event_type: string;
  tenant_id: number;
  actor: AuditActor;
  target_user_id: string;
  action: string;
  knowledge_base_id: string | null;
  outcome_status: number;
  result_count: number | null;
  occurred_at: string;
}

interface AuditRow {
  seq: number;
  id: string;
  event_type: string;
  tenant_id: number;
  actor: string;
  target_user_id: string;
  action: string;
  knowledge_base_id: string | null;
  outcome_status: number;
  result_count: number | null;
  occurred_at: number;
}

/** Creates the audit table (idempotent). */
export function migrateAudit(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS audit_log (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      event_type TEXT NOT NULL,
      tenant_id INTEGER NOT NULL,
      actor TEXT NOT NULL,
      target_user_id TEXT NOT NULL,
      action TEXT NOT NULL,
      knowledge_base_id TEXT,
      outcome_status INTEGER NOT NULL,
      result_count INTEGER,
      occurred_at INTEGER NOT NULL
    );
  `);
}

/** Typed access to the audit log. */
export class AuditStore {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      insert: db.prepare(`INSERT INTO audit_log (id, event_type, tenant_id, actor, target_user_id, action, knowledge_base_id, outcome_status,
        result_count, occurred_at) VALUES (@id, @event_type, @tenant_id, @actor, @target_user_id, @action, @knowledge_base_id, @outcome_status,
        @result_count, @occurred_at)`),
      all: db.prepare<[], AuditRow>('SELECT * FROM audit_log ORDER BY seq'),
    };
  }

  /** Appends a record. */
  append(record: Omit<AuditRecord, 'id' | 'occurred_at'>, at: number): void {
    this.s.insert.run({ ...record, id: randomUUID(), actor: JSON.stringify(record.actor), occurred_at: at });
  }

  /** Every record, oldest first. */
  all(): AuditRecord[] {
    return this.s.all.all().map(({ seq: _seq, actor, occurred_at, ...r }) => ({ ...r, actor: JSON.parse(actor) as AuditActor, occurred_at: isoTime(occurred_at) }));
  }
}
