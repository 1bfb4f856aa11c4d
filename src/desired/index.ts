/**
 * desired/: pure mapping, normalisation, merge and validation. `buildDesiredState` turns the batches of every
 * source (in config order) into the one DesiredState of a run.
 */
import type { DesiredDepartment, DesiredPosition, DesiredState, MemberStage, QuarantineEntry } from '../domain/desired.js';
import { OrgsyncError } from '../shared/errors.js';
import { listStage } from './list-stage.js';
import type { SourceBatch } from './mapping.js';
import { mergeEntity } from './merge.js';
import { checkStagedMembers, mergeStagedMembers, type StagedSource } from './settle-members.js';
import { validateDepartments } from './validate.js';

export * from './fields.js';
export * from '../shared/field-path.js';
export * from './mapping.js';
export * from './normalise.js';
export * from './merge.js';
export * from './validate.js';
export * from './scope.js';
export { listStage } from './list-stage.js';

/**
 * Merges, validates and quarantines: the desired state of one run. Departments and positions (thousands) are merged
 * in the heap; the members where the sources staged them (settle-members.ts), so a million never sit in the heap.
 */
export function buildDesiredState(batches: SourceBatch[]): DesiredState {
  const quarantine: QuarantineEntry[] = batches.flatMap((b) => b.quarantine);
  const provided = {
    departments: batches.some((b) => b.provided.departments),
    positions: batches.some((b) => b.provided.positions),
    members: batches.some((b) => b.provided.members),
  };
  const stage = sharedStage(batches);

  const deps = mergeEntity<DesiredDepartment>('departments', batches, (b) => b.departments);
  const pos = mergeEntity<DesiredPosition>('positions', batches, (b) => b.positions);
  for (const list of [deps.quarantine, pos.quarantine]) for (const q of list) quarantine.push(q);
  const sources: StagedSource[] = [...batches].sort((a, b) => a.rank - b.rank).map((b) => ({ source: b.source, authoritative: memberFields(b.authoritative) }));
  mergeStagedMembers(stage, sources, quarantine);

  // Names are required after the merge (one source may have the name, another the contact details).
  const named = <T extends { source_id: string; origin?: { source: string; location: string } }>(entity: 'departments' | 'positions', records: T[], get: (r: T) => string) =>
    records.filter((r) => {
      if (get(r) !== '') return true;
      quarantine.push({ source: r.origin?.source ?? '', entity, source_id: r.source_id, location: r.origin?.location ?? '', reason: 'empty_name', message: 'name is empty' });
      return false;
    });
  deps.records = named('departments', deps.records, (d) => d.name);
  pos.records = named('positions', pos.records, (p) => p.name);

  const quarantinedDepartments = new Set(quarantine.filter((q) => q.entity === 'departments' && q.source_id !== undefined).map((q) => q.source_id!));
  const departments = validateDepartments(deps.records, quarantinedDepartments, quarantine);
  for (const q of quarantine) if (q.entity === 'departments' && q.source_id !== undefined) quarantinedDepartments.add(q.source_id);

  const departmentCheck = { valid: new Set(departments.map((d) => d.source_id)), quarantined: quarantinedDepartments, checked: provided.departments };
  const { members, warnings } = checkStagedMembers(stage, departmentCheck, quarantine, batches.flatMap((b) => b.warnings));
  return { departments, positions: pos.records, members, quarantine, warnings, provided };
}

/** The stage the batches share (the sources of one read stage into one); a read of no source gets an empty one. */
function sharedStage(batches: readonly SourceBatch[]): MemberStage {
  const stage = batches[0]?.stage ?? listStage();
  if (batches.some((b) => b.stage !== stage)) throw new OrgsyncError('INTERNAL', 'the sources of one read staged their members in different stages');
  return stage;
}

/** `members.title` -> `title`: the member fields among a source's authoritative_fields. */
function memberFields(authoritative: readonly string[]): Set<string> {
  return new Set(authoritative.filter((f) => f.startsWith('members.')).map((f) => f.slice('members.'.length)));
}
export * from './coverage.js';
