/**
 * The knowledge area's SQLite store: knowledge bases, documents (with their bytes, so that ingestion survives a
 * restart with a --db file), chunks, and an FTS5 index over the chunks (external content, tokenizer
 * `unicode61 remove_diacritics 2`, the same split as text-scoring.ts's tokenize()).
 */
import type Database from 'better-sqlite3';

/** A knowledge base row. */
export interface KbRow {
  seq: number;
  id: string;
  tenant_id: number;
  name: string;
  description: string;
  space_kind: 'tenant' | 'personal';
  visibility: 'tenant' | 'private' | 'workspace';
  owner_email: string | null;
  owner_account_uuid: string | null;
  status: 'active' | 'pending' | 'failed';
  created_at: number;
}

/** A document row (without its bytes). */
export interface DocumentRow {
  seq: number;
  id: string;
  kb_id: string;
  tenant_id: number;
  title: string;
  mime_type: string;
  size_bytes: number;
  chunk_count: number;
  status: 'ingesting' | 'ready' | 'failed';
  failure_reason: string | null;
  created_at: number;
}

/** A chunk found by the FTS index, with what retrieval reports about it. */
export interface ChunkCandidate {
  id: string;
  document_id: string;
  document_title: string;
  document_seq: number;
  kb_id: string;
  kb_name: string;
  position: number;
  content: string;
}

/** Creates the knowledge tables (idempotent). */
export function migrateKb(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS kb_knowledge_bases (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      space_kind TEXT NOT NULL,
      visibility TEXT NOT NULL,
      owner_email TEXT,
      owner_account_uuid TEXT,
      status TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS kb_knowledge_bases_tenant ON kb_knowledge_bases(tenant_id, space_kind);
    CREATE TABLE IF NOT EXISTS kb_documents (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      kb_id TEXT NOT NULL REFERENCES kb_knowledge_bases(id),
      tenant_id INTEGER NOT NULL,
      title TEXT NOT NULL,
      mime_type TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      chunk_count INTEGER NOT NULL DEFAULT 0,
      status TEXT NOT NULL,
      failure_reason TEXT,
      content BLOB NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS kb_documents_kb ON kb_documents(kb_id, seq);
    CREATE INDEX IF NOT EXISTS kb_documents_status ON kb_documents(status);
    CREATE TABLE IF NOT EXISTS kb_chunks (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      document_id TEXT NOT NULL REFERENCES kb_documents(id),
      kb_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      content TEXT NOT NULL,
      token_count INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS kb_chunks_kb ON kb_chunks(kb_id);
    CREATE VIRTUAL TABLE IF NOT EXISTS kb_chunks_fts USING fts5(
      content, content='kb_chunks', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
    );
  `);
}

/** Typed access to the knowledge tables; statements prepared once. */
export class KbStore {
  private readonly s;

  constructor(private readonly db: Database.Database) {
    this.s = {
      insertKb: db.prepare(`INSERT OR IGNORE INTO kb_knowledge_bases
        (id, tenant_id, name, description, space_kind, visibility, owner_email, owner_account_uuid, status, created_at)
        VALUES (@id, @tenant_id, @name, @description, @space_kind, @visibility, @owner_email, @owner_account_uuid, @status, @created_at)`),
      kbById: db.prepare<[string], KbRow>('SELECT * FROM kb_knowledge_bases WHERE id = ?'),
      tenantKbs: db.prepare<[number], KbRow>(`SELECT * FROM kb_knowledge_bases WHERE tenant_id = ? AND space_kind = 'tenant' ORDER BY seq`),
      personalKbs: db.prepare<[number], KbRow>(`SELECT * FROM kb_knowledge_bases WHERE tenant_id = ? AND space_kind = 'personal' ORDER BY seq`),
      setOwner: db.prepare('UPDATE kb_knowledge_bases SET owner_account_uuid = ? WHERE id = ?'),
      documentCount: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM kb_documents WHERE kb_id = ?'),
      insertDocument: db.prepare(`INSERT OR IGNORE INTO kb_documents
        (id, kb_id, tenant_id, title, mime_type, size_bytes, chunk_count, status, failure_reason, content, created_at)
        VALUES (@id, @kb_id, @tenant_id, @title, @mime_type, @size_bytes, 0, 'ingesting', NULL, @content, @created_at)`),
      documentById: db.prepare<[string], DocumentRow>(`SELECT seq, id, kb_id, tenant_id, title, mime_type, size_bytes, chunk_count, status,
        failure_reason, created_at FROM kb_documents WHERE id = ?`),
      documents: db.prepare<[string, number], DocumentRow>(`SELECT seq, id, kb_id, tenant_id, title, mime_type, size_bytes, chunk_count,
        status, failure_reason, created_at FROM kb_documents WHERE kb_id = ? ORDER BY seq LIMIT ?`),
      documentContent: db.prepare<[string], { content: Buffer; mime_type: string; status: string }>(
        'SELECT content, mime_type, status FROM kb_documents WHERE id = ?',
      ),
      ingestingIds: db.prepare<[], { id: string }>(`SELECT id FROM kb_documents WHERE status = 'ingesting' ORDER BY seq`),
      insertChunk: db.prepare('INSERT INTO kb_chunks (id, document_id, kb_id, position, content, token_count) VALUES (?, ?, ?, ?, ?, ?)'),
      insertFts: db.prepare('INSERT INTO kb_chunks_fts (rowid, content) VALUES (?, ?)'),
      markReady: db.prepare(`UPDATE kb_documents SET status = 'ready', chunk_count = ? WHERE id = ? AND status = 'ingesting'`),
      markFailed: db.prepare(`UPDATE kb_documents SET status = 'failed', failure_reason = ? WHERE id = ? AND status = 'ingesting'`),
      candidates: db.prepare<[string, string, number], ChunkCandidate>(`
        SELECT c.id, c.document_id, d.title AS document_title, d.seq AS document_seq, c.kb_id, k.name AS kb_name, c.position, c.content
        FROM kb_chunks_fts f
        JOIN kb_chunks c ON c.seq = f.rowid
        JOIN kb_documents d ON d.id = c.document_id
        JOIN kb_knowledge_bases k ON k.id = c.kb_id
        WHERE kb_chunks_fts MATCH ? AND c.kb_id IN (SELECT value FROM json_each(?)) AND d.status = 'ready'
        ORDER BY f.rank
        LIMIT ?`),
      corpus: db.prepare<[string], { count: number; average: number }>(`
        SELECT count(*) AS count, coalesce(avg(c.token_count), 0) AS average
        FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
        WHERE c.kb_id IN (SELECT value FROM json_each(?)) AND d.status = 'ready'`),
    };
  }

  /** Inserts a knowledge base (ignored when the id exists: seeding is idempotent). */
  insertKb(row: Omit<KbRow, 'seq'>): void {
    this.s.insertKb.run(row);
  }

  kbById(id: string): KbRow | undefined {
    return this.s.kbById.get(id);
  }

  /** Tenant-level KBs (space_kind `tenant`), oldest first. */
  tenantKbs(tenantId: number): KbRow[] {
    return this.s.tenantKbs.all(tenantId);
  }

  /** Users' personal KBs of a tenant, oldest first. */
  personalKbs(tenantId: number): KbRow[] {
    return this.s.personalKbs.all(tenantId);
  }

  /** Remembers the resolved owner account of a personal KB. */
  setOwner(kbId: string, accountUuid: string): void {
    this.s.setOwner.run(accountUuid, kbId);
  }

  documentCount(kbId: string): number {
    return this.s.documentCount.get(kbId)?.n ?? 0;
  }

  /** Stores an uploaded document in status `ingesting`. */
  insertDocument(row: { id: string; kb_id: string; tenant_id: number; title: string; mime_type: string; size_bytes: number; content: Buffer; created_at: number }): void {
    this.s.insertDocument.run(row);
  }

  documentById(id: string): DocumentRow | undefined {
    return this.s.documentById.get(id);
  }

  /** The documents of a KB, oldest first, at most `limit`. */
  documents(kbId: string, limit: number): DocumentRow[] {
    return this.s.documents.all(kbId, limit);
  }

  /** The stored bytes of a document. */
  documentContent(id: string): { content: Buffer; mime_type: string; status: string } | undefined {
    return this.s.documentContent.get(id);
  }

  /** Ids of documents still waiting for ingestion (after a restart with a --db file). */
  ingestingIds(): string[] {
    return this.s.ingestingIds.all().map((r) => r.id);
  }

  /** Stores the chunks of a document and marks it `ready`, in one transaction. */
  completeDocument(documentId: string, kbId: string, chunks: readonly { id: string; content: string; tokenCount: number }[]): void {
    this.db.transaction(() => {
      chunks.forEach((chunk, position) => {
        const info = this.s.insertChunk.run(chunk.id, documentId, kbId, position, chunk.content, chunk.tokenCount);
        this.s.insertFts.run(info.lastInsertRowid, chunk.content);
      });
      this.s.markReady.run(chunks.length, documentId);
    })();
  }

  /** Marks a document `failed` with the reason its content could not be read. */
  failDocument(documentId: string, reason: string): void {
    this.s.markFailed.run(reason, documentId);
  }

  /** Chunks of ready documents of the given KBs that match an FTS5 query, best BM25 first. */
  candidates(kbIds: readonly string[], ftsQuery: string, limit = 2000): ChunkCandidate[] {
    return this.s.candidates.all(ftsQuery, JSON.stringify(kbIds), limit);
  }

  /** Size of the searched corpus: number of chunks and their average length in tokens. */
  corpus(kbIds: readonly string[]): { count: number; average: number } {
    return this.s.corpus.get(JSON.stringify(kbIds)) ?? { count: 0, average: 0 };
  }
}
