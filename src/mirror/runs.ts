import type Database from 'better-sqlite3';
import { maskContactsInText, maskContactsInValue } from '../shared/personal.js';
import { redact, redactValue } from '../shared/redact.js';
import type { Migration } from './migrations/types.js';

/** Migration 021: the history of runs that /status and `orgsync daemon` report. */
export const migration021: Migration = {
  version: 21,
  name: 'run-history',
  sql: `
CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  trigger     TEXT NOT NULL,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  result      TEXT NOT NULL,
  exit_code   INTEGER,
  summary     TEXT,
  error       TEXT
) STRICT;
CREATE INDEX runs_by_start ON runs (started_at);
`,
};

/** Triggers of the ownership commands (`orgsync adopt`, `orgsync release`): recorded, but not sync runs. */
export const OWNERSHIP_TRIGGERS = ['adopt', 'release'] as const;

const sqlList = (items: readonly string[]): string => `(${items.map((i) => `'${i}'`).join(', ')})`;

/** How a run ended; `running` while it is under way. */
export type RunRecordResult = 'running' | 'success' | 'partial' | 'failed' | 'guard' | 'interrupted' | 'dry_run';

/** One run as recorded. */
export interface RunRecord {
  id: string;
  /**
   * What started it: `start` (daemon start), `schedule`, `once` (`orgsync sync`), `apply` (`orgsync apply FILE`),
   * `adopt` or `release` (the ownership commands).
   */
  trigger: string;
  startedAt: string;
  finishedAt: string | null;
  durationSeconds: number | null;
  result: RunRecordResult;
  exitCode: number | null;
  summary: unknown;
  error: string | null;
}

interface RunRow {
  id: string;
  trigger: string;
  started_at: number;
  finished_at: number | null;
  result: RunRecordResult;
  exit_code: number | null;
  summary: string | null;
  error: string | null;
}

function toRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    trigger: row.trigger,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    durationSeconds: row.finished_at === null ? null : (row.finished_at - row.started_at) / 1000,
    result: row.result,
    exitCode: row.exit_code,
    summary: row.summary === null ? null : (JSON.parse(row.summary) as unknown),
    error: row.error,
  };
}

/** The run history in the state DB, newest first; old rows beyond `keep` are pruned. */
export class RunHistory {
  private readonly insert: Database.Statement;
  private readonly finishStmt: Database.Statement;
  private readonly recentStmt: Database.Statement;
  private readonly lastOfStmt: Database.Statement;
  private readonly pruneStmt: Database.Statement;
  private readonly abandonStmt: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly keep = 200,
  ) {
    this.insert = db.prepare('INSERT INTO runs (id, trigger, started_at, result) VALUES (?, ?, ?, \'running\')');
    this.finishStmt = db.prepare('UPDATE runs SET finished_at = ?, result = ?, exit_code = ?, summary = ?, error = ? WHERE id = ?');
    this.recentStmt = db.prepare('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?');
    // Sync runs only: the ownership commands' rows say nothing about how the sync is doing.
    this.lastOfStmt = db.prepare(
      `SELECT * FROM runs WHERE result IN (SELECT value FROM json_each(?)) AND trigger NOT IN ${sqlList(OWNERSHIP_TRIGGERS)} ORDER BY started_at DESC, rowid DESC LIMIT 1`,
    );
    this.pruneStmt = db.prepare('DELETE FROM runs WHERE rowid NOT IN (SELECT rowid FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?)');
    this.abandonStmt = db.prepare('UPDATE runs SET result = \'interrupted\', error = ? WHERE result = \'running\'');
  }

  /** Marks runs left `running` by a process that died as interrupted (call while holding the lease). */
  closeAbandoned(reason = 'the process ended before the run finished'): number {
    return this.abandonStmt.run(reason).changes;
  }

  /** Records the start of a run. */
  start(id: string, trigger: string, startedAt: number): void {
    this.insert.run(id, trigger, startedAt);
  }

  /**
   * Records how a run ended; the summary and the error pass through the shared redactor first, and any e-mail or
   * phone number left in them is masked (issue 44: the run history is served on the open /status; its texts name
   * records by id, this catches a value quoted by a platform's or a source's message).
   */
  finish(id: string, end: { finishedAt: number; result: Exclude<RunRecordResult, 'running'>; exitCode: number; summary?: unknown; error?: string }): void {
    const summary = end.summary === undefined ? null : JSON.stringify(maskContactsInValue(redactValue(end.summary)));
    this.finishStmt.run(end.finishedAt, end.result, end.exitCode, summary, end.error === undefined ? null : maskContactsInText(redact(end.error)), id);
    this.pruneStmt.run(this.keep);
  }

  /** The state DB these runs live in (other stores of the same run write beside them). */
  get database(): Database.Database {
    return this.db;
  }

  /** One run by id (`GET /runs/<id>`). */
  get(id: string): RunRecord | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row && toRecord(row);
  }

  /** The newest runs, newest first. */
  recent(limit = 10): RunRecord[] {
    return (this.recentStmt.all(limit) as RunRow[]).map(toRecord);
  }

  /** The newest sync run (not an ownership command) with one of these results. */
  lastWith(results: readonly RunRecordResult[]): RunRecord | undefined {
    const row = this.lastOfStmt.get(JSON.stringify(results)) as RunRow | undefined;
    return row && toRecord(row);
  }
}
