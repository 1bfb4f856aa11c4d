/**
 * The translation API's behaviour, apart from HTTP: keys, uploads, estimates, confirmation with idempotency and
 * credit holds, the job runner, and the JSON views. README "Document translation API" documents the choices.
 *
 * Credits: confirming holds the estimated credits (the balance drops at once, so a second confirmation sees it);
 * a succeeded job then charges its actual credits (never more than the hold) and gives the rest back; a failed job
 * gives the whole hold back. A retry with the same Idempotency-Key returns the same translation and holds nothing.
 *
 * Progress: the schedule is fixed at confirmation from the clock (queued for `queue_ms`, then `page_ms` per page), and
 * `catchUp()` applies every step whose time has come. Every request catches up first, so with the system clock jobs
 * advance on their own; tests drive a ManualClock and see the same states at the same times every run.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { TranslateApiError } from './errors.js';
import { extractPdfText, writeTranslatedPdf } from './pdf.js';
import type { TranslateSeed } from './seed.js';
import type { ArtifactRow, EstimateRow, EventRow, FileRow, KeyRow, TranslateStore, TranslationRow } from './store.js';
import {
  KNOWN_TARGET_LANGUAGES,
  TRANSLATION_MODES,
  countTokens,
  creditsFor,
  outputFactor,
  requestedCancel,
  requestedFailure,
  resolveTargetLanguage,
  translatePage,
  type TranslationMode,
} from './translator.js';

/** The SHA-256 of a key, hex: what the store keeps instead of the key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The part of a key that may be shown and logged: at most 12 characters and never more than half the key. */
export function keyPrefix(key: string): string {
  return key.slice(0, Math.min(12, Math.floor(key.length / 2)));
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** JSON with object keys sorted, so two equal bodies hash the same whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The caller of a request: the key row (never the key itself). */
export type Caller = KeyRow;

/** Options of the service. */
export interface TranslateServiceOptions {
  store: TranslateStore;
  seed: TranslateSeed;
  clock: Clock;
  logger: Logger;
}

/** The translation API's behaviour. */
export class TranslateService {
  readonly store: TranslateStore;
  readonly seed: TranslateSeed;
  readonly targetLanguages: readonly string[];
  private readonly clock: Clock;
  private readonly log: Logger;
  private catchingUp: Promise<void> = Promise.resolve();

  constructor(opts: TranslateServiceOptions) {
    this.store = opts.store;
    this.seed = opts.seed;
    this.clock = opts.clock;
    this.log = opts.logger;
    const unknown = (opts.seed.target_languages ?? []).filter((l) => !KNOWN_TARGET_LANGUAGES.includes(l));
    if (unknown.length > 0) {
      throw new Error(`translate.target_languages: the built-in translator does not know ${unknown.join(', ')} (known: ${KNOWN_TARGET_LANGUAGES.join(', ')})`);
    }
    this.targetLanguages = opts.seed.target_languages ?? KNOWN_TARGET_LANGUAGES;
  }

  /** Adds the seed's keys that the store does not hold yet (a --db file keeps balances across restarts). */
  applySeed(): void {
    this.store.transaction(() => {
      for (const k of this.seed.api_keys) {
        const hash = hashKey(k.key);
        if (this.store.keyByHash(hash)) continue;
        const prefix = keyPrefix(k.key);
        this.store.insertKey({
          key_hash: hash,
          key_prefix: prefix,
          name: k.name ?? prefix,
          account: k.account,
          credits: k.credits,
          disabled: k.disabled ? 1 : 0,
          web_translations: k.web_usage.translations,
          web_tokens: k.web_usage.tokens,
          web_credits: k.web_usage.credits,
          created_at: this.clock.now(),
        });
      }
    });
  }

  /** The key of an `Authorization: Bearer` header; 401 invalid_api_key or 403 api_key_disabled. */
  authenticate(authorization: string | undefined): Caller {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!m?.[1]) throw new TranslateApiError('invalid_api_key', 'missing or malformed Authorization: Bearer <API_KEY> header');
    const presented = Buffer.from(hashKey(m[1]), 'hex');
    // Compare against every key in constant time, so timing does not tell how close a guess was.
    let found: KeyRow | undefined;
    for (const row of this.store.allKeys()) {
      if (timingSafeEqual(presented, Buffer.from(row.key_hash, 'hex')) && !found) found = row;
    }
    if (!found) throw new TranslateApiError('invalid_api_key', 'the API key is not valid');
    if (found.disabled) throw new TranslateApiError('api_key_disabled', `the API key ${found.key_prefix}… is disabled`);
    return found;
  }

  /** GET /v1/me */
  me(caller: Caller): Record<string, unknown> {
    const keys = this.store.keysOfAccount(caller.account);
    return {
      api_key: { prefix: caller.key_prefix, name: caller.name, status: 'active', created_at: iso(caller.created_at) },
      account: { account_id: caller.account, name: caller.account, api_key_count: keys.length },
      available_credits: caller.credits,
      held_credits: this.store.creditsHeldByKey(caller.id),
      limits: {
        max_file_bytes: this.seed.max_file_bytes,
        tokens_per_credit: this.seed.tokens_per_credit,
        target_languages: this.targetLanguages,
        modes: TRANSLATION_MODES,
      },
    };
  }

  /** POST /v1/files: checks the PDF (unsupported_pdf, ocr_required) and stores it with its text. */
  async upload(caller: Caller, filename: string, bytes: Buffer): Promise<Record<string, unknown>> {
    const { pages } = await extractPdfText(bytes);
    const row: FileRow & { content: Buffer } = {
      file_id: newId('file'),
      key_id: caller.id,
      account: caller.account,
      filename: filename || 'document.pdf',
      size_bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      page_count: pages.length,
      pages_json: JSON.stringify(pages),
      input_tokens: countTokens(pages.join('\n')),
      content: bytes,
      created_at: this.clock.now(),
    };
    this.store.insertFile(row);
    this.log.info({ key_prefix: caller.key_prefix, file_id: row.file_id, size_bytes: row.size_bytes, page_count: row.page_count }, 'translate: file uploaded');
    return this.fileView(row);
  }

  private fileView(f: FileRow): Record<string, unknown> {
    return {
      file_id: f.file_id,
      filename: f.filename,
      content_type: 'application/pdf',
      size_bytes: f.size_bytes,
      sha256: f.sha256,
      page_count: f.page_count,
      text_tokens: f.input_tokens,
      created_at: iso(f.created_at),
    };
  }

  /** POST /v1/translation-estimates */
  estimate(caller: Caller, body: { file_id: string; target_language: string; mode: string }): Record<string, unknown> {
    const file = this.store.fileById(body.file_id);
    if (!file || file.account !== caller.account) throw new TranslateApiError('not_found', `file_id: no file ${body.file_id}`);
    if (resolveTargetLanguage(body.target_language, this.targetLanguages) === undefined) {
      throw new TranslateApiError('invalid_request', `target_language: must be one of ${this.targetLanguages.join(', ')}`);
    }
    if (!(TRANSLATION_MODES as readonly string[]).includes(body.mode)) {
      throw new TranslateApiError('invalid_request', `mode: must be one of ${TRANSLATION_MODES.join(', ')}`);
    }
    const mode = body.mode as TranslationMode;
    const estimatedTokens = file.input_tokens * (1 + outputFactor(mode));
    const row: EstimateRow = {
      estimate_id: newId('est'),
      key_id: caller.id,
      account: caller.account,
      file_id: file.file_id,
      target_language: body.target_language,
      mode,
      input_tokens: file.input_tokens,
      estimated_tokens: estimatedTokens,
      estimated_credits: creditsFor(estimatedTokens, this.seed.tokens_per_credit, mode),
      created_at: this.clock.now(),
    };
    this.store.insertEstimate(row);
    return this.estimateView(row, caller.credits);
  }

  private estimateView(e: EstimateRow, available: number): Record<string, unknown> {
    return {
      estimate_id: e.estimate_id,
      file_id: e.file_id,
      target_language: e.target_language,
      mode: e.mode,
      input_tokens: e.input_tokens,
      estimated_tokens: e.estimated_tokens,
      estimated_credits: e.estimated_credits,
      available_credits: available,
      can_afford: available >= e.estimated_credits,
      created_at: iso(e.created_at),
    };
  }

  /**
   * POST /v1/translations. Returns the translation and whether it is a replay of an earlier request with the same
   * Idempotency-Key and body. A refused request (404, 402) stores nothing, so the same key can be used again later.
   */
  confirm(caller: Caller, idempotencyKey: string, body: { estimate_id: string } & Record<string, unknown>): { translation: Record<string, unknown>; replayed: boolean } {
    const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    return this.store.transaction(() => {
      const earlier = this.store.translationByIdempotencyKey(caller.id, idempotencyKey);
      if (earlier) {
        if (earlier.request_hash !== requestHash) {
          throw new TranslateApiError('idempotency_conflict', 'this Idempotency-Key was used with a different request body; a different task needs a new key');
        }
        return { translation: this.translationView(earlier), replayed: true };
      }
      const estimate = this.store.estimateById(body.estimate_id);
      if (!estimate || estimate.account !== caller.account) throw new TranslateApiError('not_found', `estimate_id: no estimate ${body.estimate_id}`);
      const key = this.store.keyById(caller.id) ?? caller;
      if (key.credits < estimate.estimated_credits) {
        throw new TranslateApiError(
          'insufficient_credits',
          `the estimate needs ${estimate.estimated_credits} credits and ${key.credits} are available; recharge before confirming`,
        );
      }
      const file = this.store.fileById(estimate.file_id);
      if (!file) throw new TranslateApiError('not_found', `file_id: no file ${estimate.file_id}`);
      const now = this.clock.now();
      const row: TranslationRow = {
        translation_id: newId('tr'),
        key_id: caller.id,
        account: caller.account,
        estimate_id: estimate.estimate_id,
        file_id: estimate.file_id,
        target_language: estimate.target_language,
        mode: estimate.mode,
        source: 'api',
        status: 'queued',
        page_count: file.page_count,
        pages_done: 0,
        estimated_tokens: estimate.estimated_tokens,
        estimated_credits: estimate.estimated_credits,
        actual_tokens: 0,
        actual_credits: 0,
        error_code: null,
        error_message: null,
        idempotency_key: idempotencyKey,
        request_hash: requestHash,
        created_at: now,
        start_at: now + this.seed.queue_ms,
        page_ms: this.seed.page_ms,
        started_at: null,
        finished_at: null,
      };
      this.store.insertTranslation(row);
      this.store.addCredits(caller.id, -estimate.estimated_credits);
      this.event(row, 'translation.queued', 0, null, 'translation queued', now);
      this.log.info(
        { key_prefix: caller.key_prefix, translation_id: row.translation_id, estimated_credits: row.estimated_credits },
        'translate: translation queued',
      );
      return { translation: this.translationView(row), replayed: false };
    });
  }

  /** GET /v1/translations/{id} */
  translation(caller: Caller, id: string): Record<string, unknown> {
    return this.translationView(this.ownTranslation(caller, id));
  }

  /** GET /v1/translations/{id}/events */
  events(caller: Caller, id: string, afterSeq: number): Record<string, unknown> {
    const t = this.ownTranslation(caller, id);
    return { translation_id: t.translation_id, status: t.status, events: this.store.eventsOf(t.translation_id, afterSeq).map((e) => this.eventView(e, t)) };
  }

  /** GET /v1/translations/{id}/artifacts/{artifact_id}: the artifact's metadata and bytes, or 404 artifact_not_found. */
  artifact(caller: Caller, id: string, artifactId: string): { row: ArtifactRow; content: Buffer } {
    const t = this.store.translationById(id);
    const missing = () => new TranslateApiError('artifact_not_found', `no artifact ${artifactId} on translation ${id}; re-check the translation's status and artifacts`);
    if (!t || t.account !== caller.account) throw missing();
    const row = this.store.artifactsOf(t.translation_id).find((a) => a.artifact_id === artifactId);
    const content = row ? this.store.artifactContent(t.translation_id, artifactId) : undefined;
    if (!row || !content) throw missing();
    return { row, content };
  }

  /** GET /v1/usage?groupBy=overview: API versus web usage of each key of the caller's account. */
  usageOverview(caller: Caller): Record<string, unknown> {
    const zero = () => ({ translations: 0, tokens: 0, credits: 0 });
    const totals = { api: zero(), web: zero(), total: zero() };
    const add = (into: { translations: number; tokens: number; credits: number }, u: { translations: number; tokens: number; credits: number }) => {
      into.translations += u.translations;
      into.tokens += u.tokens;
      into.credits += u.credits;
    };
    const keys = this.store.keysOfAccount(caller.account).map((k) => {
      const a = this.store.apiUsageOfKey(k.id);
      const api = { translations: a.translations, succeeded: a.succeeded, failed: a.failed, canceled: a.canceled, tokens: a.tokens, credits: a.credits };
      const web = { translations: k.web_translations, tokens: k.web_tokens, credits: k.web_credits };
      const total = zero();
      add(total, api);
      add(total, web);
      add(totals.api, api);
      add(totals.web, web);
      add(totals.total, total);
      return { key_prefix: k.key_prefix, name: k.name, status: k.disabled ? 'disabled' : 'active', current: k.id === caller.id, api, web, total };
    });
    return { group_by: 'overview', account_id: caller.account, generated_at: iso(this.clock.now()), totals, keys };
  }

  private ownTranslation(caller: Caller, id: string): TranslationRow {
    const t = this.store.translationById(id);
    if (!t || t.account !== caller.account) throw new TranslateApiError('not_found', `no translation ${id}`);
    return t;
  }

  private progressOf(t: TranslationRow): number {
    if (t.status === 'succeeded') return 100;
    return t.page_count === 0 ? 0 : Math.floor((t.pages_done * 100) / t.page_count);
  }

  private translationView(t: TranslationRow): Record<string, unknown> {
    const view: Record<string, unknown> = {
      translation_id: t.translation_id,
      status: t.status,
      estimate_id: t.estimate_id,
      file_id: t.file_id,
      target_language: t.target_language,
      mode: t.mode,
      progress: this.progressOf(t),
      page_count: t.page_count,
      pages_done: t.pages_done,
      estimated_tokens: t.estimated_tokens,
      actual_tokens: t.actual_tokens,
      estimated_credits: t.estimated_credits,
      actual_credits: t.actual_credits,
    };
    if (t.error_code !== null) {
      view.error_code = t.error_code;
      view.error_message = t.error_message;
    }
    view.artifacts = this.store.artifactsOf(t.translation_id).map((a) => ({
      artifact_id: a.artifact_id,
      kind: a.kind,
      filename: a.filename,
      content_type: a.content_type,
      size_bytes: a.size_bytes,
      sha256: a.sha256,
      download_url: `/v1/translations/${encodeURIComponent(t.translation_id)}/artifacts/${encodeURIComponent(a.artifact_id)}`,
      created_at: iso(a.created_at),
    }));
    view.created_at = iso(t.created_at);
    view.started_at = iso(t.started_at);
    view.finished_at = iso(t.finished_at);
    return view;
  }

  private eventView(e: EventRow, t: TranslationRow): Record<string, unknown> {
    return {
      event_id: `${e.translation_id}-${e.seq}`,
      sequence: e.seq,
      type: e.type,
      status: e.status,
      progress: e.progress,
      page: e.page,
      page_count: t.page_count,
      message: e.message,
      created_at: iso(e.created_at),
    };
  }

  private event(t: TranslationRow, type: string, progress: number, page: number | null, message: string, at: number): void {
    this.store.insertEvent({ translation_id: t.translation_id, type, status: t.status, progress, page, message, created_at: at });
  }

  /**
   * Applies every scheduled step whose time has come: queued -> running at `start_at`, one page per `page_ms`,
   * then succeeded (artifact written) or failed. Calls are serialised, so concurrent requests never double a step.
   */
  catchUp(): Promise<void> {
    const run = this.catchingUp.then(() => this.catchUpNow());
    this.catchingUp = run.catch(() => {});
    return run;
  }

  private async catchUpNow(): Promise<void> {
    const now = this.clock.now();
    for (const open of this.store.openTranslations()) {
      if (now < open.start_at) continue;
      const t = { ...open };
      const file = this.store.fileById(t.file_id);
      const pages: string[] = file ? (JSON.parse(file.pages_json) as string[]) : [];
      const steps: (() => void)[] = [];
      if (t.status === 'queued') {
        t.status = 'running';
        t.started_at = t.start_at;
        const snapshot = { ...t };
        steps.push(() => this.event(snapshot, 'translation.running', 0, null, 'translation started', snapshot.start_at));
      }
      const due = t.page_ms === 0 ? t.page_count : Math.min(t.page_count, Math.floor((now - t.start_at) / t.page_ms));
      let finished: 'succeeded' | 'failed' | 'canceled' | undefined;
      while (t.pages_done < due && !finished) {
        const page = t.pages_done + 1;
        const at = t.start_at + page * t.page_ms;
        const failure = requestedFailure(pages[page - 1] ?? '');
        if (requestedCancel(pages[page - 1] ?? '')) {
          t.status = 'canceled';
          t.finished_at = at;
          finished = 'canceled';
          const snapshot = { ...t };
          steps.push(() => this.event(snapshot, 'translation.canceled', this.progressOf(snapshot), page, 'translation canceled', at));
          break;
        }
        if (failure) {
          t.status = 'failed';
          t.finished_at = at;
          t.error_code = failure;
          t.error_message = `the translation failed on page ${page} (the page asks for emulator-fail)`;
          finished = 'failed';
          const snapshot = { ...t };
          steps.push(() => this.event(snapshot, 'translation.failed', this.progressOf(snapshot), page, `failed: ${failure}`, at));
          break;
        }
        t.pages_done = page;
        const snapshot = { ...t };
        steps.push(() => this.event(snapshot, 'translation.page_translated', this.progressOf(snapshot), page, `page ${page} of ${snapshot.page_count} translated`, at));
        if (page === t.page_count) finished = 'succeeded';
      }
      let artifact: (ArtifactRow & { content: Buffer }) | undefined;
      if (finished === 'succeeded') {
        const language = resolveTargetLanguage(t.target_language, KNOWN_TARGET_LANGUAGES) ?? 'en';
        const translated = pages.map((p) => translatePage(p, language, t.mode as TranslationMode));
        const bytes = Buffer.from(
          await writeTranslatedPdf(translated, { title: `${file?.filename ?? 'document'} (${language})`, language }),
        );
        const at = t.start_at + t.page_count * t.page_ms;
        const outputTokens = countTokens(translated.map((lines) => lines.join('\n')).join('\n'));
        t.actual_tokens = (file?.input_tokens ?? 0) + outputTokens;
        // Never charge more than was held at confirmation.
        t.actual_credits = Math.min(t.estimated_credits, creditsFor(t.actual_tokens, this.seed.tokens_per_credit, t.mode as TranslationMode));
        t.status = 'succeeded';
        t.finished_at = at;
        artifact = {
          artifact_id: newId('art'),
          translation_id: t.translation_id,
          kind: 'translated_pdf',
          filename: `${(file?.filename ?? 'document.pdf').replace(/\.pdf$/i, '')}.${language}.pdf`,
          content_type: 'application/pdf',
          size_bytes: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          content: bytes,
          created_at: at,
        };
        const snapshot = { ...t };
        steps.push(() => this.event(snapshot, 'translation.succeeded', 100, null, 'translation succeeded', at));
      }
      this.store.transaction(() => {
        // Another writer (a second emulator on the same --db file) may have moved it meanwhile.
        const current = this.store.translationById(t.translation_id);
        if (!current || current.status !== open.status || current.pages_done !== open.pages_done) return;
        for (const step of steps) step();
        if (artifact) this.store.insertArtifact(artifact);
        if (finished) this.store.addCredits(t.key_id, t.estimated_credits - t.actual_credits);
        this.store.updateProgress(t);
      });
      if (finished) {
        const key = this.store.keyById(t.key_id);
        this.log.info(
          { key_prefix: key?.key_prefix, translation_id: t.translation_id, status: t.status, error_code: t.error_code, actual_credits: t.actual_credits },
          'translate: translation finished',
        );
      }
    }
  }
}
