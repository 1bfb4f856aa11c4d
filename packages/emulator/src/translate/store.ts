/**
 * The translation API's own SQLite store (in memory, or a file with --db): keys, files, estimates, translations,
 * events and artifacts. Nothing here is shared with the tenant API. Statements are prepared once.
 */
import Database from 'better-sqlite3';

/** A key row. The secret is never stored: only its SHA-256 and a display prefix. */
export interface KeyRow {
  id: number;
  key_hash: string;
  key_prefix: string;
  name: string;
  account: string;
  credits: number;
  disabled: number;
  web_translations: number;
  web_tokens: number;
  web_credits: number;
  created_at: number;
}

/** An uploaded file. */
export interface FileRow {
  file_id: string;
  key_id: number;
  account: string;
  filename: string;
  size_bytes: number;
  sha256: string;
  page_count: number;
  /** JSON array of the extracted text of each page. */
  pages_json: string;
  input_tokens: number;
  created_at: number;
}

/** An estimate. */
export interface EstimateRow {
  estimate_id: string;
  key_id: number;
  account: string;
  file_id: string;
  target_language: string;
  mode: string;
  input_tokens: number;
  estimated_tokens: number;
  estimated_credits: number;
  created_at: number;
}

/** A translation (the job). Times are epoch milliseconds; the schedule is fixed at confirmation. */
export interface TranslationRow {
  translation_id: string;
  key_id: number;
  account: string;
  estimate_id: string;
  file_id: string;
  target_language: string;
  mode: string;
  source: 'api' | 'web';
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  page_count: number;
  pages_done: number;
  estimated_tokens: number;
  estimated_credits: number;
  actual_tokens: number;
  actual_credits: number;
  error_code: string | null;
  error_message: string | null;
  idempotency_key: string;
  request_hash: string;
  created_at: number;
  start_at: number;
  page_ms: number;
  started_at: number | null;
  finished_at: number | null;
}

/** What a key spent through the API. */
export interface ApiUsage {
  translations: number;
  succeeded: number;
  failed: number;
  canceled: number;
  tokens: number;
  credits: number;
}

/** A progress event. */
export interface EventRow {
  translation_id: string;
  seq: number;
  type: string;
  status: string;
  progress: number;
  page: number | null;
  message: string;
  created_at: number;
}

/** An artifact (its bytes are read only on download). */
export interface ArtifactRow {
  artifact_id: string;
  translation_id: string;
  kind: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tr_keys (
  id INTEGER PRIMARY KEY,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  name TEXT NOT NULL,
  account TEXT NOT NULL,
  credits INTEGER NOT NULL,
  disabled INTEGER NOT NULL,
  web_translations INTEGER NOT NULL,
  web_tokens INTEGER NOT NULL,
  web_credits INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tr_files (
  file_id TEXT PRIMARY KEY,
  key_id INTEGER NOT NULL REFERENCES tr_keys(id),
  account TEXT NOT NULL,
  filename TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  page_count INTEGER NOT NULL,
  pages_json TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  content BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tr_estimates (
  estimate_id TEXT PRIMARY KEY,
  key_id INTEGER NOT NULL REFERENCES tr_keys(id),
  account TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES tr_files(file_id),
  target_language TEXT NOT NULL,
  mode TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  estimated_tokens INTEGER NOT NULL,
  estimated_credits INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tr_translations (
  translation_id TEXT PRIMARY KEY,
  key_id INTEGER NOT NULL REFERENCES tr_keys(id),
  account TEXT NOT NULL,
  estimate_id TEXT NOT NULL REFERENCES tr_estimates(estimate_id),
  file_id TEXT NOT NULL,
  target_language TEXT NOT NULL,
  mode TEXT NOT NULL,
  source TEXT NOT NULL,
  status TEXT NOT NULL,
  page_count INTEGER NOT NULL,
  pages_done INTEGER NOT NULL,
  estimated_tokens INTEGER NOT NULL,
  estimated_credits INTEGER NOT NULL,
  actual_tokens INTEGER NOT NULL,
  actual_credits INTEGER NOT NULL,
  error_code TEXT,
  error_message TEXT,
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  start_at INTEGER NOT NULL,
  page_ms INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  UNIQUE (key_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS tr_translations_open ON tr_translations(status) WHERE status IN ('queued', 'running');
CREATE TABLE IF NOT EXISTS tr_events (
  translation_id TEXT NOT NULL REFERENCES tr_translations(translation_id),
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  progress INTEGER NOT NULL,
  page INTEGER,
  message TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (translation_id, seq)
);
CREATE TABLE IF NOT EXISTS tr_artifacts (
  artifact_id TEXT PRIMARY KEY,
  translation_id TEXT NOT NULL REFERENCES tr_translations(translation_id),
  kind TEXT NOT NULL,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  content BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
`;

/** Opens (and creates) the store; `path` ':memory:' (default) or a file. */
export class TranslateStore {
  readonly db: Database.Database;
  private readonly s;

  constructor(path = ':memory:') {
    this.db = new Database(path);
    if (path !== ':memory:') this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.exec(SCHEMA);
    const db = this.db;
    this.s = {
      allKeys: db.prepare<[], KeyRow>('SELECT * FROM tr_keys ORDER BY id'),
      keyById: db.prepare<[number], KeyRow>('SELECT * FROM tr_keys WHERE id = ?'),
      keyByHash: db.prepare<[string], KeyRow>('SELECT * FROM tr_keys WHERE key_hash = ?'),
      keysOfAccount: db.prepare<[string], KeyRow>('SELECT * FROM tr_keys WHERE account = ? ORDER BY id'),
      insertKey: db.prepare(
        `INSERT INTO tr_keys (key_hash, key_prefix, name, account, credits, disabled, web_translations, web_tokens, web_credits, created_at)
         VALUES (@key_hash, @key_prefix, @name, @account, @credits, @disabled, @web_translations, @web_tokens, @web_credits, @created_at)`,
      ),
      setDisabled: db.prepare<[number, number]>('UPDATE tr_keys SET disabled = ? WHERE id = ?'),
      addCredits: db.prepare<[number, number]>('UPDATE tr_keys SET credits = credits + ? WHERE id = ?'),
      insertFile: db.prepare(
        `INSERT INTO tr_files (file_id, key_id, account, filename, size_bytes, sha256, page_count, pages_json, input_tokens, content, created_at)
         VALUES (@file_id, @key_id, @account, @filename, @size_bytes, @sha256, @page_count, @pages_json, @input_tokens, @content, @created_at)`,
      ),
      fileById: db.prepare<[string], FileRow>(
        'SELECT file_id, key_id, account, filename, size_bytes, sha256, page_count, pages_json, input_tokens, created_at FROM tr_files WHERE file_id = ?',
      ),
      insertEstimate: db.prepare(
        `INSERT INTO tr_estimates (estimate_id, key_id, account, file_id, target_language, mode, input_tokens, estimated_tokens, estimated_credits, created_at)
         VALUES (@estimate_id, @key_id, @account, @file_id, @target_language, @mode, @input_tokens, @estimated_tokens, @estimated_credits, @created_at)`,
      ),
      estimateById: db.prepare<[string], EstimateRow>('SELECT * FROM tr_estimates WHERE estimate_id = ?'),
      insertTranslation: db.prepare(
        `INSERT INTO tr_translations (translation_id, key_id, account, estimate_id, file_id, target_language, mode, source, status, page_count,
           pages_done, estimated_tokens, estimated_credits, actual_tokens, actual_credits, error_code, error_message, idempotency_key,
           request_hash, created_at, start_at, page_ms, started_at, finished_at)
         VALUES (@translation_id, @key_id, @account, @estimate_id, @file_id, @target_language, @mode, @source, @status, @page_count,
           @pages_done, @estimated_tokens, @estimated_credits, @actual_tokens, @actual_credits, @error_code, @error_message, @idempotency_key,
           @request_hash, @created_at, @start_at, @page_ms, @started_at, @finished_at)`,
      ),
      translationById: db.prepare<[string], TranslationRow>('SELECT * FROM tr_translations WHERE translation_id = ?'),
      translationByIdem: db.prepare<[number, string], TranslationRow>('SELECT * FROM tr_translations WHERE key_id = ? AND idempotency_key = ?'),
      openTranslations: db.prepare<[], TranslationRow>(
        "SELECT * FROM tr_translations WHERE status IN ('queued', 'running') ORDER BY created_at, translation_id",
      ),
      updateProgress: db.prepare(
        `UPDATE tr_translations SET status = @status, pages_done = @pages_done, started_at = @started_at, finished_at = @finished_at,
           actual_tokens = @actual_tokens, actual_credits = @actual_credits, error_code = @error_code, error_message = @error_message
         WHERE translation_id = @translation_id`,
      ),
      // Credits count what the balance lost: the hold of an unfinished translation, the actual charge of a finished one.
      apiUsageOfKey: db.prepare<[number], ApiUsage>(
        `SELECT COUNT(*) AS translations,
           COALESCE(SUM(status = 'succeeded'), 0) AS succeeded,
           COALESCE(SUM(status = 'failed'), 0) AS failed,
           COALESCE(SUM(status = 'canceled'), 0) AS canceled,
           COALESCE(SUM(actual_tokens), 0) AS tokens,
           COALESCE(SUM(CASE WHEN status IN ('queued', 'running') THEN estimated_credits ELSE actual_credits END), 0) AS credits
         FROM tr_translations WHERE key_id = ? AND source = 'api'`,
      ),
      creditsHeldByKey: db.prepare<[number], { held: number }>(
        "SELECT COALESCE(SUM(estimated_credits), 0) AS held FROM tr_translations WHERE key_id = ? AND status IN ('queued', 'running')",
      ),
      insertEvent: db.prepare(
        `INSERT INTO tr_events (translation_id, seq, type, status, progress, page, message, created_at)
         VALUES (@translation_id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tr_events WHERE translation_id = @translation_id),
           @type, @status, @progress, @page, @message, @created_at)`,
      ),
      eventsOf: db.prepare<[string, number], EventRow>('SELECT * FROM tr_events WHERE translation_id = ? AND seq > ? ORDER BY seq'),
      insertArtifact: db.prepare(
        `INSERT INTO tr_artifacts (artifact_id, translation_id, kind, filename, content_type, size_bytes, sha256, content, created_at)
         VALUES (@artifact_id, @translation_id, @kind, @filename, @content_type, @size_bytes, @sha256, @content, @created_at)`,
      ),
      artifactsOf: db.prepare<[string], ArtifactRow>(
        'SELECT artifact_id, translation_id, kind, filename, content_type, size_bytes, sha256, created_at FROM tr_artifacts WHERE translation_id = ? ORDER BY artifact_id',
      ),
      artifactContent: db.prepare<[string, string], { content: Buffer }>('SELECT content FROM tr_artifacts WHERE artifact_id = ? AND translation_id = ?'),
    };
  }

  /** Every key, in seed order. */
  allKeys(): KeyRow[] {
    return this.s.allKeys.all();
  }
  /** A key by its row id. */
  keyById(id: number): KeyRow | undefined {
    return this.s.keyById.get(id);
  }
  /** A key by the SHA-256 of its secret. */
  keyByHash(hash: string): KeyRow | undefined {
    return this.s.keyByHash.get(hash);
  }
  /** The keys of one account. */
  keysOfAccount(account: string): KeyRow[] {
    return this.s.keysOfAccount.all(account);
  }
  /** Adds a key. */
  insertKey(row: Omit<KeyRow, 'id'>): void {
    this.s.insertKey.run(row);
  }
  /** Turns a key off or on. */
  setDisabled(id: number, disabled: boolean): void {
    this.s.setDisabled.run(disabled ? 1 : 0, id);
  }
  /** Adds (or, negative, takes) credits. */
  addCredits(id: number, delta: number): void {
    this.s.addCredits.run(delta, id);
  }
  /** Stores an uploaded file. */
  insertFile(row: FileRow & { content: Buffer }): void {
    this.s.insertFile.run(row);
  }
  /** A file (without its bytes). */
  fileById(id: string): FileRow | undefined {
    return this.s.fileById.get(id);
  }
  /** Stores an estimate. */
  insertEstimate(row: EstimateRow): void {
    this.s.insertEstimate.run(row);
  }
  /** An estimate by id. */
  estimateById(id: string): EstimateRow | undefined {
    return this.s.estimateById.get(id);
  }
  /** Stores a new translation. */
  insertTranslation(row: TranslationRow): void {
    this.s.insertTranslation.run(row);
  }
  /** A translation by id. */
  translationById(id: string): TranslationRow | undefined {
    return this.s.translationById.get(id);
  }
  /** The translation a key created with an Idempotency-Key. */
  translationByIdempotencyKey(keyId: number, idempotencyKey: string): TranslationRow | undefined {
    return this.s.translationByIdem.get(keyId, idempotencyKey);
  }
  /** Translations not finished yet, oldest first. */
  openTranslations(): TranslationRow[] {
    return this.s.openTranslations.all();
  }
  /** Writes a translation's progress fields. */
  updateProgress(row: Pick<TranslationRow, 'translation_id' | 'status' | 'pages_done' | 'started_at' | 'finished_at' | 'actual_tokens' | 'actual_credits' | 'error_code' | 'error_message'>): void {
    this.s.updateProgress.run(row);
  }
  /** A key's API translations, tokens and credits. */
  apiUsageOfKey(keyId: number): ApiUsage {
    return this.s.apiUsageOfKey.get(keyId) ?? { translations: 0, succeeded: 0, failed: 0, canceled: 0, tokens: 0, credits: 0 };
  }
  /** Credits held by a key's unfinished translations. */
  creditsHeldByKey(keyId: number): number {
    return this.s.creditsHeldByKey.get(keyId)?.held ?? 0;
  }
  /** Appends an event (its seq is the next of the translation). */
  insertEvent(row: Omit<EventRow, 'seq'>): void {
    this.s.insertEvent.run(row);
  }
  /** Events of a translation after a sequence number. */
  eventsOf(translationId: string, afterSeq = 0): EventRow[] {
    return this.s.eventsOf.all(translationId, afterSeq);
  }
  /** Stores an artifact. */
  insertArtifact(row: ArtifactRow & { content: Buffer }): void {
    this.s.insertArtifact.run(row);
  }
  /** The artifacts of a translation (without bytes). */
  artifactsOf(translationId: string): ArtifactRow[] {
    return this.s.artifactsOf.all(translationId);
  }
  /** An artifact's bytes. */
  artifactContent(translationId: string, artifactId: string): Buffer | undefined {
    return this.s.artifactContent.get(artifactId, translationId)?.content;
  }
  /** Runs `fn` in one transaction. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
  /** Closes the database. */
  close(): void {
    this.db.close();
  }
}
