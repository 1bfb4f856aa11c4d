/**
 * BambooHR's changed-since (https://documentation.bamboohr.com/reference/get-changed-employee-ids):
 * `GET <members.delta.url>?since=<ISO time>` answers `{ latest, employees: { "<id>": { id, action, lastChanged } } }`
 * for every employee whose record (any field, or the job, employment status or compensation tables) changed since
 * then. Deleted ones leave the snapshot. Inserted and Updated ones are read again with the preset's own custom report
 * (members.url and body) filtered to their ids (`filters.employeeIds`, which the report endpoint documents), a batch
 * of ids per request: the same fields in the same shape as the full read, so a record read by delta maps exactly as
 * one read in full, in a handful of requests instead of one `GET /v1/employees/{id}` per employee.
 *
 * The watermark is the time the read began, by the server's clock (the Date header of its first answer) minus
 * `overlap`, so a change made while the read ran is read again next time (reading a record twice is harmless).
 * BambooHR takes `since` to the second, without fractions.
 */
import type { HrisDeltaConfig } from '../../config/sources.js';
import { redactUrl } from '../../shared/redact.js';
import { sourceUnreadable, throwIfAborted } from '../context.js';
import { itemsOf, parseJson } from './body.js';
import { recordKey, type DeltaChanges, type DeltaDeps, type DeltaProtocol } from './delta-records.js';

type BambooDeltaConfig = Extract<HrisDeltaConfig, { type: 'bamboohr' }>;

/** An instant as BambooHR's `since` takes it: yyyy-mm-ddThh:mm:ssZ. */
export function bambooTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The watermark of a read that began by the server's `date` (the local clock when the server sent none). */
function watermarkAt(date: string | undefined, deps: DeltaDeps, overlapMs: number): string {
  const server = date === undefined ? NaN : Date.parse(date);
  return bambooTime((Number.isFinite(server) ? server : deps.ctx.clock.now()) - overlapMs);
}

/** The ids of a changed-since answer, by action. */
function changedIds(deps: DeltaDeps, body: unknown, where: string): { changed: string[]; deleted: string[] } {
  const employees = (body as { employees?: unknown } | null)?.employees;
  if (employees === null || typeof employees !== 'object' || Array.isArray(employees)) {
    throw sourceUnreadable(deps.source.name, `members: ${where}: the changed-since answer has no employees object`);
  }
  const changed: string[] = [];
  const deleted: string[] = [];
  for (const [id, entry] of Object.entries(employees as Record<string, unknown>)) {
    const action = (entry as { action?: unknown } | null)?.action;
    if (action === 'Deleted') deleted.push(id);
    else if (action === 'Inserted' || action === 'Updated') changed.push(id);
    else throw sourceUnreadable(deps.source.name, `members: ${where}: employee ${id} has action ${JSON.stringify(action)} (expected Inserted, Updated or Deleted)`);
  }
  return { changed, deleted };
}

/** Reads the employees `ids` with the members' report, filtered to them, into `out`. */
async function readEmployees(config: BambooDeltaConfig, deps: DeltaDeps, ids: readonly string[], out: DeltaChanges): Promise<void> {
  const { cfg, reader, source } = deps;
  for (let from = 0; from < ids.length; from += config.batch_size) {
    throwIfAborted(deps.ctx.signal);
    const batch = ids.slice(from, from + config.batch_size).map((id) => (/^\d+$/.test(id) ? Number(id) : id));
    const body = { ...(cfg.body ?? {}), filters: { employeeIds: batch } };
    const answer = await reader.getText(new URL(cfg.url!), { method: cfg.method, body });
    const where = redactUrl(answer.url);
    const items = itemsOf(source.name, 'members', cfg.items_path, parseJson(source.name, 'members', answer.text, where, false), where);
    items.forEach((item, i) => out.put.set(recordKey(deps, config.key, item, `${where}#$.${cfg.items_path}[${i}]`), item));
  }
}

/** BambooHR's delta protocol for `members.delta: { type: bamboohr }`. */
export function bamboohrDelta(config: BambooDeltaConfig, deps: DeltaDeps): DeltaProtocol {
  const overlapMs = config.overlap;
  return {
    watermarkBeforeFull: () => Promise.resolve(undefined),
    watermarkAfterFull: (firstDate) => watermarkAt(firstDate, deps, overlapMs),
    async changes(watermark) {
      const url = new URL(config.url);
      url.searchParams.set('since', watermark);
      const answer = await deps.reader.getText(url);
      const where = redactUrl(answer.url);
      const ids = changedIds(deps, parseJson(deps.source.name, 'members', answer.text, where, false), where);
      const out: DeltaChanges = { put: new Map(), removed: new Set(ids.deleted), partial: false, watermark: watermarkAt(answer.date, deps, overlapMs) };
      await readEmployees(config, deps, ids.changed, out);
      return out;
    },
  };
}
