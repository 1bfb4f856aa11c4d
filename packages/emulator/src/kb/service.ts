/**
 * The knowledge area's rules over its store: who sees which KB, the wire form of KBs and documents, seeding.
 * The audit area reuses it to read users' private KBs.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { ApiError } from '../core/errors.js';
import type { Seed } from '../core/seed.js';
import type { EmulatorContext, Principal } from '../core/types.js';
import { SeedError } from '../core/seed-error.js';
import type { SeedKnowledgeBase } from './seed.js';
import { AccountNumbers, isoTime, isUuid, stableUuid } from './ids.js';
import { chunksOf, IngestionQueue } from './ingestion.js';
import { KbStore, type DocumentRow, type KbRow } from './store.js';
import { callerAccount } from './validation.js';

/** The most documents a document list returns. */
export const DOCUMENT_LIST_LIMIT = 200;

/** A KB as the API returns it. */
export interface KbJson {
  id: string;
  name: string;
  description: string;
  space_kind: string;
  owner_account_id: number;
  visibility: string;
  status: string;
  document_count: number;
  created_at: string;
}

/** A document as the API returns it. */
export interface DocumentJson {
  id: string;
  knowledge_base_id: string;
  title: string;
  mime_type: string;
  size_bytes: number;
  chunk_count: number;
  status: string;
  created_at: string;
}

/** 404 `kb.not_found`: a KB or document that is missing, in another tenant, or private and not the caller's. */
export const kbNotFound = (what = 'knowledge base'): ApiError => new ApiError(404, 'kb.not_found', `${what} not found`);

/** The knowledge service of one emulator. */
export class KnowledgeService {
  readonly store: KbStore;
  readonly queue: IngestionQueue;
  private readonly accounts: AccountNumbers;

  constructor(
    private readonly db: Database.Database,
    private readonly ctx: EmulatorContext,
  ) {
    this.store = new KbStore(db);
    this.queue = new IngestionQueue(this.store, ctx.logger);
    this.accounts = new AccountNumbers(db);
  }

  /** The account id (UUID) of a personal KB's creator, resolved through the org directory by e-mail. */
  ownerOf(kb: KbRow): string | undefined {
    if (kb.space_kind !== 'personal') return undefined;
    if (kb.owner_account_uuid) return kb.owner_account_uuid;
    if (!kb.owner_email) return undefined;
    const member = this.ctx.directory.memberByEmail(kb.tenant_id, kb.owner_email);
    if (!member) return undefined;
    this.store.setOwner(kb.id, member.account_id);
    kb.owner_account_uuid = member.account_id;
    return member.account_id;
  }

  kbJson(kb: KbRow): KbJson {
    const owner = this.ownerOf(kb);
    return {
      id: kb.id,
      name: kb.name,
      description: kb.description,
      space_kind: kb.space_kind,
      owner_account_id: owner === undefined ? 0 : this.accounts.of(owner),
      visibility: kb.visibility,
      status: kb.status,
      document_count: this.store.documentCount(kb.id),
      created_at: isoTime(kb.created_at),
    };
  }

  documentJson(doc: DocumentRow): DocumentJson {
    return {
      id: doc.id,
      knowledge_base_id: doc.kb_id,
      title: doc.title,
      mime_type: doc.mime_type,
      size_bytes: doc.size_bytes,
      chunk_count: doc.chunk_count,
      status: doc.status,
      created_at: isoTime(doc.created_at),
    };
  }

  /** The KB `id` as `principal` may see it, or 404 `kb.not_found` (missing, other tenant, private and not theirs). */
  visibleKb(principal: Principal, id: string): KbRow {
    const kb = isUuid(id) ? this.store.kbById(id.toLowerCase()) : undefined;
    if (!kb || kb.tenant_id !== principal.tenantId) throw kbNotFound();
    if (kb.visibility === 'private') {
      const caller = callerAccount(principal);
      if (caller === undefined || caller !== this.ownerOf(kb)) throw kbNotFound();
    }
    return kb;
  }

  /** A document of a KB, or 404 `kb.not_found`. */
  documentIn(kb: KbRow, documentId: string): DocumentRow {
    const doc = isUuid(documentId) ? this.store.documentById(documentId.toLowerCase()) : undefined;
    if (!doc || doc.kb_id !== kb.id) throw kbNotFound('document');
    return doc;
  }

  /** The personal KBs of a user (account id) in a tenant. */
  personalKbsOf(tenantId: number, accountId: string): KbRow[] {
    return this.store.personalKbs(tenantId).filter((kb) => this.ownerOf(kb) === accountId);
  }

  /** Creates a tenant-level KB. */
  createKb(tenantId: number, name: string, description: string): KbRow {
    const id = randomUUID();
    this.store.insertKb({
      id,
      tenant_id: tenantId,
      name,
      description,
      space_kind: 'tenant',
      visibility: 'tenant',
      owner_email: null,
      owner_account_uuid: null,
      status: 'active',
      created_at: this.ctx.clock.now(),
    });
    return this.store.kbById(id)!;
  }

  /** Stores an upload (status `ingesting`) and queues its ingestion. */
  addDocument(kb: KbRow, title: string, mimeType: string, content: Buffer): DocumentRow {
    const id = randomUUID();
    this.store.insertDocument({ id, kb_id: kb.id, tenant_id: kb.tenant_id, title, mime_type: mimeType, size_bytes: content.length, content, created_at: this.ctx.clock.now() });
    this.queue.enqueue(id);
    return this.store.documentById(id)!;
  }

  /** Seeds the KBs and documents of the seed (idempotent: fixed or derived ids, INSERT OR IGNORE), in one transaction. */
  applySeed(): void {
    const now = this.ctx.clock.now();
    const planned = planKbSeed(this.ctx.seed);
    this.db.transaction(() => {
      for (const { tenantId, kb, kbId, documents } of planned) {
        this.store.insertKb({
          id: kbId,
          tenant_id: tenantId,
          name: kb.name,
          description: kb.description,
          space_kind: kb.space_kind ?? (kb.visibility === 'private' ? 'personal' : 'tenant'),
          visibility: kb.visibility,
          owner_email: kb.owner_email ?? null,
          owner_account_uuid: null,
          status: kb.status,
          created_at: now,
        });
        for (const { doc, docId } of documents) {
          if (this.store.documentById(docId)) continue;
          const bytes = Buffer.from(doc.content, 'utf8');
          this.store.insertDocument({ id: docId, kb_id: kbId, tenant_id: tenantId, title: doc.title, mime_type: doc.mime_type, size_bytes: bytes.length, content: bytes, created_at: now });
          // Seeded text is chunked now, so a seeded document is `ready` from the start.
          this.store.completeDocument(docId, kbId, chunksOf(docId, doc.content, doc.mime_type));
        }
      }
    })();
  }

  /** Queues documents left `ingesting` (a restart with a --db file). */
  resumeIngestion(): void {
    for (const id of this.store.ingestingIds()) this.queue.enqueue(id);
  }
}

/** A seeded KB with its resolved id and its documents' ids. */
interface PlannedKb {
  tenantId: number;
  kb: SeedKnowledgeBase;
  kbId: string;
  documents: { doc: SeedKnowledgeBase['documents'][number]; docId: string }[];
}

/** `name`, `name#2`, `name#3`, ...: the n-th occurrence of a name, so that equal names still get distinct derived ids. */
function occurrence(counts: Map<string, number>, key: string): string {
  const n = (counts.get(key) ?? 0) + 1;
  counts.set(key, n);
  return n === 1 ? key : `${key}#${n}`;
}

/**
 * Resolves the ids of seeded KBs and documents and checks what the schema cannot: ids unique across the seed, owners
 * that are seeded members of the tenant, and agents' knowledge_base_ids that name KBs of their own tenant.
 */
export function planKbSeed(seed: Seed): PlannedKb[] {
  const fail = (path: string, message: string): never => {
    throw new SeedError(`seed: ${path}: ${message}`);
  };
  const planned: PlannedKb[] = [];
  const kbIds = new Map<string, number>();
  const docIds = new Set<string>();
  seed.tenants.forEach((tenant, t) => {
    const names = new Map<string, number>();
    const emails = new Set(tenant.members.map((m) => m.email?.toLowerCase()).filter((e): e is string => e !== undefined));
    tenant.knowledge_bases.forEach((kb, k) => {
      const at = `tenants[${t}].knowledge_bases[${k}]`;
      const kbId = (kb.id ?? stableUuid(`kb:${tenant.id}:${occurrence(names, kb.name)}`)).toLowerCase();
      if (kbIds.has(kbId)) fail(`${at}.id`, `duplicate knowledge base id ${kbId}`);
      kbIds.set(kbId, tenant.id);
      if (kb.owner_email !== undefined && !emails.has(kb.owner_email.toLowerCase())) {
        fail(`${at}.owner_email`, `no member with e-mail ${kb.owner_email} in this tenant`);
      }
      const titles = new Map<string, number>();
      const documents = kb.documents.map((doc, d) => {
        const docId = (doc.id ?? stableUuid(`doc:${kbId}:${occurrence(titles, doc.title)}`)).toLowerCase();
        if (docIds.has(docId)) fail(`${at}.documents[${d}].id`, `duplicate document id ${docId}`);
        docIds.add(docId);
        return { doc, docId };
      });
      planned.push({ tenantId: tenant.id, kb, kbId, documents });
    });
  });
  seed.tenants.forEach((tenant, t) => {
    tenant.agents.forEach((agent, a) => {
      agent.knowledge_base_ids.forEach((id, i) => {
        if (kbIds.get(id.toLowerCase()) !== tenant.id) {
          fail(`tenants[${t}].agents[${a}].knowledge_base_ids[${i}]`, `no seeded knowledge base ${id} in this tenant`);
        }
      });
    });
  });
  return planned;
}
