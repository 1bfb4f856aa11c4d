/**
 * Reading a saved plan change by change (issue 31 point 2): a plan of a million changes parsed whole is about 1.5 GB
 * of objects, so `approvals show` and `apply FILE` read it as it streams. Every change is checked and fed to the
 * signature as it passes and handed to the caller; what is kept is the caller's choice. The checks, their order and
 * their messages are parseSavedPlanChunks's (./saved-plan.ts): the same document is accepted or refused the same way.
 */
import { createHmac, randomUUID, type Hmac } from 'node:crypto';
import type { Change } from '../domain/index.js';
import { canonicalJson, jsonChunks } from '../shared/json-chunks.js';
import { parseJsonChunks } from '../shared/json-stream-reader.js';
import { changeIssue, firstIssue, integrityFailed, notJson, refuseMisshapen, refuseOtherSync, refuseUnsigned, type SavedPlanFile } from './saved-plan.js';

/** A saved plan read by streamSavedPlan: the checked document with `plan.changes` left empty, and how many it had. */
export interface StreamedSavedPlan {
  saved: SavedPlanFile;
  changeCount: number;
}

/** Where a caller's changes go: `each` in plan order; `restart` forgets them (a second pass hands them over again). */
export interface ChangeSink {
  each(change: Change, index: number): void;
  restart?(): void;
}

/**
 * The canonical JSON of a saved plan without its integrity, around its changes: `before` ends with the `[` that opens
 * them and `after` (chunks) starts with the `]` that closes them. The changes' place is found by a marker no
 * document can hold (a random id), wherever the canonical order puts them.
 */
function canonicalAround(doc: Record<string, unknown>, plan: Record<string, unknown>): { before: string; after: string[] } {
  const placeholder = `orgsync-changes-${randomUUID()}`;
  const marker = JSON.stringify(placeholder);
  const { integrity: _integrity, ...rest } = doc;
  let before: string | undefined;
  let head = '';
  const after: string[] = [];
  // A chunk never splits a string: the marker is inside one chunk.
  for (const chunk of jsonChunks({ ...rest, plan: { ...plan, changes: placeholder } }, 'canonical')) {
    if (before !== undefined) {
      after.push(chunk);
      continue;
    }
    const at = chunk.indexOf(marker);
    if (at < 0) head += chunk;
    else {
      before = `${head}${chunk.slice(0, at)}[`;
      after.push(`]${chunk.slice(at + marker.length)}`);
    }
  }
  return { before: before!, after };
}

/** One pass over the document: what was read, and the signature fed with everything up to the changes' end. */
interface Pass {
  json: unknown;
  /** Set when `plan.changes` was an array (streamed): the canonical text put before the changes, and the signature. */
  streamed?: { before: string; hmac: Hmac };
  count: number;
  issue?: string;
}

/** Reads the document once, handing each well-shaped change to `sink` until the first misshapen one. */
function readPass(chunks: Iterable<Uint8Array | string>, file: string, key: Buffer, before: string | undefined, sink: ChangeSink): Pass {
  const pass: Pass = { json: undefined, count: 0 };
  const open = (objects: readonly Record<string, unknown>[]) => {
    const text = before ?? canonicalAround(objects[0]!, objects[1]!).before;
    pass.streamed = { before: text, hmac: createHmac('sha256', key).update(text) };
  };
  const each = (value: unknown, index: number) => {
    pass.count = index + 1;
    pass.streamed!.hmac.update(index === 0 ? canonicalJson(value) : `,${canonicalJson(value)}`);
    if (pass.issue !== undefined) return;
    pass.issue = changeIssue(value, index);
    if (pass.issue === undefined) sink.each(value as Change, index);
  };
  try {
    pass.json = parseJsonChunks(chunks, { stream: { path: ['plan', 'changes'], open, each } });
  } catch (err) {
    throw notJson(err, file);
  }
  return pass;
}

/**
 * Reads and checks a saved plan given as chunks without keeping its changes: each is handed to `sink` in plan order
 * as it is read, and fed to the signature check. Refuses (the messages of parseSavedPlanChunks: not JSON, not a saved
 * plan, edited or of another state DB, of another sync) only after the changes were handed over: a caller acts on
 * them once this returns. `source` gives the chunks; it is read a second time only when the document's keys are not
 * in the order orgsync writes them (the signature needs, before the changes, keys that came after them).
 */
export function streamSavedPlan(source: () => Iterable<Uint8Array | string>, file: string, syncId: string, key: Buffer, sink: ChangeSink): StreamedSavedPlan {
  let pass = readPass(source(), file, key, undefined, sink);
  const doc = pass.json as Record<string, unknown> | null;
  // No changes array where a saved plan has it: the shape check says what the document is instead.
  if (!pass.streamed) refuseMisshapen(doc, firstIssue(doc) ?? 'plan.changes: missing', file);
  refuseMisshapen(doc, firstIssue(doc) ?? pass.issue, file);
  const saved = doc as unknown as SavedPlanFile;
  let around = canonicalAround(doc!, saved.plan as unknown as Record<string, unknown>);
  if (around.before !== pass.streamed!.before) {
    // The signed text before the changes holds keys read after them: read again, now knowing it.
    sink.restart?.();
    const first = around;
    pass = readPass(source(), file, key, first.before, sink);
    const again = pass.json as Record<string, unknown> | null;
    refuseMisshapen(again, firstIssue(again) ?? pass.issue, file);
    around = canonicalAround(again!, (again as unknown as SavedPlanFile).plan as unknown as Record<string, unknown>);
    // Changed between the passes: not the document that was signed.
    if (around.before !== first.before || around.after.join('') !== first.after.join('')) throw integrityFailed(file);
  }
  const hmac = pass.streamed!.hmac;
  for (const chunk of around.after) hmac.update(chunk);
  const checked = pass.json as SavedPlanFile;
  refuseUnsigned(file, checked.integrity, `hmac-sha256:${hmac.digest('hex')}`);
  refuseOtherSync(file, checked, syncId);
  return { saved: checked, changeCount: pass.count };
}
