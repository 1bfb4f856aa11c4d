/**
 * desired/: pure mapping, normalisation, merge and validation. `buildDesiredState` turns the batches of every
 * source (in config order) into the one DesiredState of a run.
 */
import type { DesiredDepartment, DesiredMember, DesiredPosition, DesiredState, QuarantineEntry, SourceWarning } from '../domain/desired.js';
import type { SourceBatch, SourceMember } from './mapping.js';
import { mergeEntity } from './merge.js';
import { validateDepartments, validateMembers } from './validate.js';

export * from './fields.js';
export * from '../shared/field-path.js';
export * from './mapping.js';
export * from './normalise.js';
export * from './merge.js';
export * from './validate.js';
export * from './scope.js';

/** Merges, validates and quarantines: the desired state of one run. */
export function buildDesiredState(batches: SourceBatch[]): DesiredState {
  const quarantine: QuarantineEntry[] = batches.flatMap((b) => b.quarantine);
  const provided = {
    departments: batches.some((b) => b.provided.departments),
    positions: batches.some((b) => b.provided.positions),
    members: batches.some((b) => b.provided.members),
  };

  const deps = mergeEntity<DesiredDepartment>('departments', batches, (b) => b.departments);
  const pos = mergeEntity<DesiredPosition>('positions', batches, (b) => b.positions);
  const mem = mergeEntity<SourceMember>('members', batches, (b) => b.members);
  for (const list of [deps.quarantine, pos.quarantine, mem.quarantine]) for (const q of list) quarantine.push(q);

  // Names are required after the merge (one source may have the name, another the contact details).
  const named = <T extends { source_id: string; origin?: { source: string; location: string } }>(entity: 'departments' | 'positions' | 'members', field: string, records: T[], get: (r: T) => string) =>
    records.filter((r) => {
      if (get(r) !== '') return true;
      quarantine.push({ source: r.origin?.source ?? '', entity, source_id: r.source_id, location: r.origin?.location ?? '', reason: 'empty_name', message: `${field} is empty` });
      return false;
    });
  deps.records = named('departments', 'name', deps.records, (d) => d.name);
  pos.records = named('positions', 'name', pos.records, (p) => p.name);
  // Members: the name check and the default status in one pass (300,000 records are not walked twice for it).
  // Copied only from the first member set aside: a million named members are not copied into a second list.
  let namedMembers: SourceMember[] | undefined;
  const records = mem.records;
  for (let i = 0; i < records.length; i++) {
    const m = records[i]!;
    if (m.display_name === '') {
      namedMembers ??= records.slice(0, i);
      quarantine.push({ source: m.origin?.source ?? '', entity: 'members', source_id: m.source_id, location: m.origin?.location ?? '', reason: 'empty_name', message: 'display_name is empty' });
      continue;
    }
    m.status ??= 'active';
    namedMembers?.push(m);
  }
  mem.records = namedMembers ?? records;

  const quarantinedDepartments = new Set(quarantine.filter((q) => q.entity === 'departments' && q.source_id !== undefined).map((q) => q.source_id!));
  const departments = validateDepartments(deps.records, quarantinedDepartments, quarantine);
  for (const q of quarantine) if (q.entity === 'departments' && q.source_id !== undefined) quarantinedDepartments.add(q.source_id);

  const members = mem.records as DesiredMember[];
  const validMembers = validateMembers(
    members,
    { valid: new Set(departments.map((d) => d.source_id)), quarantined: quarantinedDepartments, checked: provided.departments },
    quarantine,
    // One source: its members, merged, are its own records (the merge of one batch changes no value).
    batches.length === 1 && batches[0]!.contactsUnique === true,
  );
  return { departments, positions: pos.records, members: validMembers, quarantine, warnings: settleWarnings(batches, validMembers, quarantine), provided };
}

/**
 * The warnings of the run: only of members that are synced. A member whose phone was dropped and who has no e-mail
 * either is quarantined as `no_contact`; its entry then names the dropped phone instead of a warning.
 */
function settleWarnings(batches: SourceBatch[], members: DesiredMember[], quarantine: QuarantineEntry[]): SourceWarning[] {
  const all = batches.flatMap((b) => b.warnings);
  if (all.length === 0) return all;
  const dropped = new Map<string, SourceWarning[]>();
  for (const w of all) if (w.code === 'invalid_phone_dropped') dropped.set(w.source_id, [...(dropped.get(w.source_id) ?? []), w]);
  for (const q of quarantine) {
    const ws = q.entity === 'members' && q.reason === 'no_contact' && q.source_id !== undefined ? dropped.get(q.source_id) : undefined;
    if (ws) q.message = `member has neither e-mail nor a valid phone (the platform needs one): ${ws.map((w) => w.problem).join('; ')}`;
  }
  const synced = new Set(members.map((m) => m.source_id));
  return all.filter((w) => synced.has(w.source_id));
}
export * from './coverage.js';
