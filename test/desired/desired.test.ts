import { describe, expect, it } from 'vitest';
import { buildDesiredState, compileField, getPath, listStage, mapStatus, normaliseEmail, normalisePhone, SourceCollector, type SourceBatch } from '../../src/desired/index.js';
import type { MemberStage } from '../../src/domain/index.js';

const lookupOf = (rec: Record<string, unknown>) => (name: string) => getPath(rec, name);

describe('field specs', () => {
  it('reads an attribute, a dotted path, a template and a first-non-empty list', () => {
    const rec = { givenName: ' Ada ', sn: 'Lovelace', department: { id: 7 }, mobile: '', tel: '+1 415 555 0101', multi: ['first', 'second'] };
    expect(compileField('sn').read(lookupOf(rec))).toEqual({ ok: true, value: 'Lovelace' });
    expect(compileField('department.id').read(lookupOf(rec))).toEqual({ ok: true, value: '7' });
    expect(compileField('{givenName} {sn}').read(lookupOf(rec))).toEqual({ ok: true, value: 'Ada Lovelace' });
    expect(compileField('{givenName} {middle} {sn}').read(lookupOf(rec))).toEqual({ ok: true, value: 'Ada Lovelace' });
    expect(compileField('{nothing}@example.com').read(lookupOf(rec))).toEqual({ ok: true, value: '' });
    expect(compileField(['mobile', 'tel']).read(lookupOf(rec))).toEqual({ ok: true, value: '+1 415 555 0101' });
    expect(compileField('multi').read(lookupOf(rec))).toEqual({ ok: true, value: 'first' });
    expect(compileField('department').read(lookupOf(rec))).toEqual({ ok: false, problem: 'department is an object, not a value' });
    expect(compileField(['{givenName} {sn}', 'tel']).names).toEqual(['givenName', 'sn', 'tel']);
  });
});

describe('normalisation', () => {
  it('trims and lower-cases e-mail, rejects non-addresses', () => {
    expect(normaliseEmail('  Ada@Example.COM ')).toEqual({ value: 'ada@example.com' });
    expect(normaliseEmail('zoë@exämple.de')).toEqual({ value: 'zoë@exämple.de' });
    for (const bad of ['ada', 'ada@', '@example.com', 'ada@example', 'a b@example.com', 'ada..x@example.com', '.ada@example.com', 'ada@@example.com']) {
      expect(normaliseEmail(bad)).toEqual({ reason: 'invalid_email', message: `invalid e-mail "${bad}"` });
    }
  });

  it('turns phones into E.164 with a default region', () => {
    expect(normalisePhone('(415) 555-0132', 'US')).toEqual({ value: '+14155550132' });
    expect(normalisePhone('030 901820', 'DE')).toEqual({ value: '+4930901820' });
    expect(normalisePhone('+44 20 7946 0958', undefined)).toEqual({ value: '+442079460958' });
    expect(normalisePhone('(415) 555-0132', undefined)).toEqual({ reason: 'invalid_phone', message: 'invalid phone "(415) 555-0132" (no country code and no phone_region)' });
  });

  it('maps statuses, canonical values need no entry', () => {
    const map = { Terminated: 'left', 'On Leave': 'suspended' } as const;
    expect(mapStatus('On Leave', map)).toEqual({ value: 'suspended' });
    expect(mapStatus('Terminated', map)).toEqual({ value: 'left' });
    expect(mapStatus('ACTIVE', map)).toEqual({ value: 'active' });
    expect(mapStatus('Retired', map)).toEqual({ reason: 'unknown_status', message: 'status "Retired" is not in status_map' });
  });
});

/** One source's batch, read into `stage` at `rank` (the sources of one read share a stage: `merged`). */
type Reader = (stage: MemberStage, rank: number) => SourceBatch;

/** The batches of several sources read in config order into one stage, as readSourcesReport reads them. */
function merged(...readers: Reader[]): SourceBatch[] {
  const stage = listStage();
  return readers.map((read, rank) => read(stage, rank));
}

function batch(source: string, members: Record<string, unknown>[], opts: { authoritative?: string[]; statusField?: boolean; departments?: Record<string, unknown>[] } = {}): Reader {
  return (stage, rank) => readBatch(source, members, opts, stage, rank);
}

function readBatch(source: string, members: Record<string, unknown>[], opts: { authoritative?: string[]; statusField?: boolean; departments?: Record<string, unknown>[] }, stage: MemberStage, rank: number): SourceBatch {
  const c = new SourceCollector({
    source,
    stage,
    rank,
    authoritativeFields: opts.authoritative ?? [],
    members: { fields: { id: 'id', display_name: 'name', email: 'email', title: 'title', department: 'dept', ...(opts.statusField ? { status: 'status' } : {}) } },
    ...(opts.departments ? { departments: { fields: { id: 'id', name: 'name', parent: 'parent' } } } : {}),
  });
  opts.departments?.forEach((d, i) => c.addDepartment(lookupOf(d), `${source}:d${i}`));
  members.forEach((m, i) => c.addMember(lookupOf(m), `${source}:${i}`));
  return c.finish();
}

describe('merge of several sources', () => {
  it('takes each field from the first source that has it, in config order', () => {
    const state = buildDesiredState(merged(
      batch('hr', [{ id: 'E1', name: 'Ada Lovelace', title: '' }, { id: 'E2', name: 'Alan', email: 'alan@x.org' }]),
      batch('ldap', [{ id: 'E1', name: 'A. Lovelace', email: 'ada@x.org', title: 'Engineer', status: 'suspended' }, { id: 'E3', name: 'Grace', email: 'grace@x.org' }], { statusField: true }),
    ));
    expect(state.quarantine).toEqual([]);
    expect([...state.members].map((m) => [m.source_id, m.display_name, m.email, m.title, m.status])).toEqual([
      ['E1', 'Ada Lovelace', 'ada@x.org', 'Engineer', 'suspended'],
      ['E2', 'Alan', 'alan@x.org', undefined, 'active'],
      ['E3', 'Grace', 'grace@x.org', undefined, 'active'],
    ]);
    expect([...state.members][0]!.origin).toEqual({
      source: 'hr',
      location: 'hr:0',
      fieldSources: { display_name: 'hr', email: 'ldap', title: 'ldap', status: 'ldap' },
    });
    // Single-source records keep a plain origin.
    expect([...state.members][1]!.origin).toEqual({ source: 'hr', location: 'hr:1' });
  });

  it('lets a later source win the fields it is authoritative for', () => {
    const state = buildDesiredState(merged(
      batch('hr', [{ id: 'E1', name: 'Ada Lovelace', email: 'ada@hr.org', title: 'Clerk' }]),
      batch('ldap', [{ id: 'E1', name: 'Ada L.', email: 'ada@ldap.org', title: 'Engineer' }], { authoritative: ['members.email', 'members.title'] }),
    ));
    expect([...state.members][0]).toMatchObject({ display_name: 'Ada Lovelace', email: 'ada@ldap.org', title: 'Engineer' });
    expect([...state.members][0]!.origin!.fieldSources).toEqual({ display_name: 'hr', email: 'ldap', title: 'ldap' });
  });

  it('quarantines a record everywhere when one source quarantines it', () => {
    const state = buildDesiredState(merged(
      batch('hr', [{ id: 'E1', name: 'Ada', email: 'not-an-address' }, { id: 'E2', name: 'Alan', email: 'alan@x.org' }]),
      batch('ldap', [{ id: 'E1', name: 'Ada', email: 'ada@x.org' }]),
    ));
    expect([...state.members].map((m) => m.source_id)).toEqual(['E2']);
    expect(state.quarantine.map((q) => [q.source, q.source_id, q.reason, q.message])).toEqual([
      ['hr', 'E1', 'invalid_email', 'invalid e-mail "not-an-address"'],
      ['ldap', 'E1', 'quarantined_in_other_source', 'the same record is quarantined in source "hr"'],
    ]);
  });

  it('checks departments across sources: a member of one source may sit in another source\'s department', () => {
    const state = buildDesiredState(merged(
      batch('hr', [{ id: 'E1', name: 'Ada', email: 'ada@x.org', dept: 'D2' }], { departments: [{ id: 'D1', name: 'Top' }] }),
      batch('org', [], { departments: [{ id: 'D2', name: 'Child', parent: 'D1' }] }),
    ));
    expect(state.quarantine).toEqual([]);
    expect(state.departments.map((d) => d.source_id)).toEqual(['D1', 'D2']);
    expect(state.provided).toEqual({ departments: true, positions: false, members: true });
  });

  it('does not check member departments when no source provides departments', () => {
    const state = buildDesiredState(merged(batch('hr', [{ id: 'E1', name: 'Ada', email: 'ada@x.org', dept: 'D9' }])));
    expect(state.quarantine).toEqual([]);
    expect([...state.members][0]!.department_source_id).toBe('D9');
    expect(state.provided.departments).toBe(false);
  });

  it('orders departments parents first even when the source lists children first', () => {
    const state = buildDesiredState(merged(batch('hr', [], { departments: [{ id: 'C', name: 'c', parent: 'B' }, { id: 'B', name: 'b', parent: 'A' }, { id: 'A', name: 'a' }] })));
    expect(state.departments.map((d) => d.source_id)).toEqual(['A', 'B', 'C']);
  });

  it('reports a longer cycle once per member of the ring', () => {
    const state = buildDesiredState(merged(batch('hr', [], { departments: [{ id: 'A', name: 'a', parent: 'C' }, { id: 'B', name: 'b', parent: 'A' }, { id: 'C', name: 'c', parent: 'B' }, { id: 'X', name: 'x' }] })));
    expect(state.departments.map((d) => d.source_id)).toEqual(['X']);
    expect(state.quarantine.map((q) => [q.source_id, q.reason, q.message])).toEqual([
      ['A', 'cycle', 'the department hierarchy has a cycle: "A" -> "C" -> "B" -> "A"'],
      ['C', 'cycle', 'the department hierarchy has a cycle: "A" -> "C" -> "B" -> "A"'],
      ['B', 'cycle', 'the department hierarchy has a cycle: "A" -> "C" -> "B" -> "A"'],
    ]);
  });
});
