/**
 * Background ingestion: an upload answers at once with status `ingesting`; this queue then extracts the text, chunks
 * it and marks the document `ready` (with chunk_count) or `failed`. Documents are processed one at a time in upload
 * order. Tests wait for it deterministically through `drain()` (admin route POST /_emulator/kb/ingestion/drain), and
 * can hold it with `pause` to observe `ingesting`.
 */
import type { Logger } from '../core/logger.js';
import { chunkText, extractDocumentText, UnreadableDocumentError } from './chunking.js';
import { stableUuid } from './ids.js';
import type { KbStore } from './store.js';
import { tokenize } from './text-scoring.js';

/** The chunks of a text, ready to store. */
export function chunksOf(documentId: string, text: string, mimeType: string): { id: string; content: string; tokenCount: number }[] {
  return chunkText(text, mimeType).map((content, position) => ({
    id: stableUuid(`chunk:${documentId}:${position}`),
    content,
    tokenCount: tokenize(content).length,
  }));
}

/** The ingestion queue of one emulator. */
export class IngestionQueue {
  private readonly pending: string[] = [];
  private running: Promise<void> | undefined;
  private paused = false;
  private closed = false;

  constructor(
    private readonly store: KbStore,
    private readonly logger: Logger,
  ) {}

  /** Queues a document for ingestion. */
  enqueue(documentId: string): void {
    this.pending.push(documentId);
    this.kick();
  }

  /** Holds (true) or resumes (false) processing. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.kick();
  }

  /** Documents waiting, and whether processing is held. */
  state(): { pending: number; paused: boolean } {
    return { pending: this.pending.length + (this.running ? 1 : 0), paused: this.paused };
  }

  /** Resolves when nothing is left to process (or, when paused, once the document in progress is done). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops processing (the emulator is closing). */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }

  private kick(): void {
    if (this.running || this.paused || this.closed || this.pending.length === 0) return;
    this.running = this.run().finally(() => {
      this.running = undefined;
      this.kick();
    });
  }

  private async run(): Promise<void> {
    // Let the upload's answer go out first: a new document is always seen as `ingesting`.
    await new Promise((resolve) => setImmediate(resolve));
    while (!this.paused && !this.closed) {
      const id = this.pending.shift();
      if (id === undefined) return;
      await this.process(id);
    }
  }

  private async process(documentId: string): Promise<void> {
    const doc = this.store.documentContent(documentId);
    if (!doc || doc.status !== 'ingesting') return;
    const kbId = this.store.documentById(documentId)?.kb_id;
    if (kbId === undefined) return;
    try {
      const text = await extractDocumentText(doc.content, doc.mime_type);
      this.store.completeDocument(documentId, kbId, chunksOf(documentId, text, doc.mime_type));
    } catch (err) {
      const reason = err instanceof UnreadableDocumentError ? err.message : 'ingestion failed';
      if (!(err instanceof UnreadableDocumentError)) this.logger.error({ documentId, err: (err as Error).message }, 'document ingestion failed');
      this.store.failDocument(documentId, reason);
    }
  }
}
