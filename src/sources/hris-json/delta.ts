/**
 * Members of an hris-json source read by delta (issue 31, `members.delta`). The run says how (ctx.delta):
 * - full: the watermark is taken first where the protocol can (Graph: a deltaLink of "now"), then members.url is
 *   walked as on any run (its stated-total check included) and every record is put in the snapshot;
 * - delta: the protocol asks the source for the changes since the saved watermark (graph-delta.ts,
 *   bamboohr-delta.ts), and the members are the snapshot's records with those applied: removed ones left out,
 *   changed ones merged (Graph sends only the changed properties) or replaced (BambooHR's report sends them whole),
 *   new ones added. Mapped the same way as a full read, so guards and the planner see the whole directory.
 * A delta the source no longer answers (an expired token, 410, syncStateNotFound) falls back to a full read. So does
 * a delta endpoint that fails outright (a gateway without /users/delta, a permission the key lacks): the members are
 * still read, in full, with a warning naming the endpoint; a missing delta never costs the run its source.
 */
import type { HrisDeltaConfig } from '../../config/sources.js';
import { jsonLookup, type Lookup } from '../../desired/index.js';
import type { DeltaReadContext } from '../delta/types.js';
import { isOrgsyncError } from '../../shared/errors.js';
import { bamboohrDelta } from './bamboohr-delta.js';
import { mergeChange, recordKey, type DeltaChanges, type DeltaDeps, type DeltaProtocol } from './delta-records.js';
import { graphDelta } from './graph-delta.js';
import { walkPages } from './pagination.js';

/** The protocol of a `members.delta` block. */
function protocolOf(delta: HrisDeltaConfig, deps: DeltaDeps): DeltaProtocol {
  switch (delta.type) {
    case 'graph':
      return graphDelta(delta, deps);
    case 'bamboohr':
      return bamboohrDelta(delta, deps);
  }
}

/** Reads the members with a DeltaReadContext, handing each record (as the mapping sees it) to `add`. */
export async function readMembersByDelta(delta: DeltaReadContext, config: HrisDeltaConfig, deps: DeltaDeps, add: (l: Lookup, where: string) => void): Promise<void> {
  const protocol = protocolOf(config, deps);
  if (delta.mode === 'delta' && delta.watermark !== undefined) {
    const changes = delta.watermark.startsWith(NO_WATERMARK) ? { fallback: `no delta watermark (${delta.watermark.slice(NO_WATERMARK.length)})` } : await deltaOrFallback(protocol, delta.watermark, deps);
    if (!('fallback' in changes)) return applyChanges(delta, changes, add);
    delta.writer.fellBackToFull(changes.fallback);
  }
  await fullRead(delta, config, protocol, deps, add);
}

/** The watermark saved when the source gave none: the next run reads in full again and says why. */
const NO_WATERMARK = 'none: ';

/** A failure of the delta endpoint only (not a stop): its message, as the reason a full read runs instead. */
function deltaFailure(err: unknown, deps: DeltaDeps): string {
  if (!isOrgsyncError(err) || deps.ctx.signal?.aborted) throw err;
  return err.message.replace(`source "${deps.source.name}": `, '');
}

/** The changes since `watermark`, or the reason to read in full: an expired token, or a delta endpoint that failed. */
async function deltaOrFallback(protocol: DeltaProtocol, watermark: string, deps: DeltaDeps): Promise<DeltaChanges | { fallback: string }> {
  try {
    return await protocol.changes(watermark);
  } catch (err) {
    const reason = deltaFailure(err, deps);
    deps.ctx.logger.warn({ reason }, 'the delta endpoint failed: reading the members in full (set members.delta: false to stop asking it)');
    return { fallback: `the delta failed: ${reason}` };
  }
}

/** The watermark before a full read, or a "none" marker with the reason when the delta endpoint cannot give one. */
async function watermarkBefore(protocol: DeltaProtocol, deps: DeltaDeps): Promise<string | undefined> {
  try {
    return await protocol.watermarkBeforeFull();
  } catch (err) {
    const reason = deltaFailure(err, deps);
    deps.ctx.logger.warn({ reason }, 'the delta endpoint gave no watermark: the members are read in full, and again next run (set members.delta: false to stop asking it)');
    return `${NO_WATERMARK}${reason}`;
  }
}

/** A full read: the watermark, then every page of members.url into the snapshot and the mapping. */
async function fullRead(delta: DeltaReadContext, config: HrisDeltaConfig, protocol: DeltaProtocol, deps: DeltaDeps, add: (l: Lookup, where: string) => void): Promise<void> {
  const before = await watermarkBefore(protocol, deps);
  let firstDate: string | undefined;
  let first = true;
  const { source, cfg, reader, ctx } = deps;
  for await (const { items, where, itemsPath, date } of walkPages({ source: source.name, entity: 'members', cfg, maxPages: source.max_pages, reader, ctx })) {
    if (first) firstDate = date;
    first = false;
    const base = itemsPath === '' ? '$' : `$.${itemsPath}`;
    for (let i = 0; i < items.length; i++) {
      const at = `${where}#${base}[${i}]`;
      delta.writer.put('members', { key: recordKey(deps, config.key, items[i], at), raw: items[i] });
      add(jsonLookup(items[i]), at);
    }
  }
  delta.writer.watermark(before ?? protocol.watermarkAfterFull(firstDate));
}

/** The snapshot with the changes applied: every record into the mapping, the changed ones into the snapshot. */
function applyChanges(delta: DeltaReadContext, changes: DeltaChanges, add: (l: Lookup, where: string) => void): void {
  for (const record of delta.snapshot('members')) {
    if (changes.removed.has(record.key)) {
      delta.writer.remove('members', record.key);
      continue;
    }
    const change = changes.put.get(record.key);
    if (change === undefined) {
      add(jsonLookup(record.raw), `snapshot#members[${JSON.stringify(record.key)}]`);
      continue;
    }
    changes.put.delete(record.key);
    const raw = changes.partial ? mergeChange(record.raw, change) : change;
    delta.writer.put('members', { key: record.key, raw });
    add(jsonLookup(raw), `delta#members[${JSON.stringify(record.key)}]`);
  }
  // Keys the snapshot did not have: new records (sent whole).
  for (const [key, raw] of changes.put) {
    delta.writer.put('members', { key, raw });
    add(jsonLookup(raw), `delta#members[${JSON.stringify(key)}]`);
  }
  delta.writer.watermark(changes.watermark);
}
