/**
 * Fields that matched nothing (issue 45): a collector read with `coverage` names each mapped field none of whose paths
 * gave a value in any record read, with how far each path got: a key missing, a filter that matched no element, an
 * index past the end, null. Fields that found a value in some record, and fallbacks of a field that found one, are
 * not named.
 */
import { describe, expect, it } from 'vitest';
import { gapText, jsonLookup, SourceCollector } from '../../src/desired/index.js';

/** Two ADP-shaped workers: organisational units of several types, no Department among them. */
const workers = [
  {
    associateOID: 'G3A',
    person: { legalName: { givenName: 'Ana', familyName1: 'Lima', nickName: null } },
    businessCommunication: { emails: [{ nameCode: { codeValue: 'Work E-mail' }, emailUri: 'ana@example.com' }] },
    workAssignments: [{ primaryIndicator: true, homeOrganizationalUnits: [{ typeCode: { codeValue: 'Business Unit' }, nameCode: { codeValue: 'CORP' } }] }],
  },
  {
    associateOID: 'G3B',
    person: { legalName: { givenName: 'Ben', familyName1: 'Cole' } },
    businessCommunication: { emails: [{ nameCode: { codeValue: 'Work E-mail' }, emailUri: 'ben@example.com' }] },
    workAssignments: [{ primaryIndicator: false, homeOrganizationalUnits: [] }],
  },
];

function read(fields: Record<string, string | string[]>, paths = true) {
  const c = new SourceCollector({ source: 'hr', members: { fields: { id: 'associateOID', display_name: '{person.legalName.givenName} {person.legalName.familyName1}', ...fields } }, coverage: { paths } });
  workers.forEach((w, i) => c.addMember(jsonLookup(w), `w${i}`));
  return c.finish().fieldGaps;
}

describe('fields that matched nothing', () => {
  it('names the field and, per path, where the walk stopped in the record that got furthest', () => {
    const gaps = read({
      email: 'businessCommunication.emails[nameCode.codeValue=Work E-mail].emailUri',
      department: 'workAssignments[primaryIndicator=true].homeOrganizationalUnits[typeCode.codeValue=Department].nameCode.codeValue',
      phone: ['businessCommunication.mobiles[0].formattedNumber', 'person.communication.mobiles[0].formattedNumber'],
      title: 'workAssignments[1].jobTitle',
      status: 'workerStatus.statusCode.codeValue',
      start_date: 'person.legalName.nickName',
    });
    expect(gaps!.map((g) => [g.field, gapText(g)])).toEqual([
      ['department', 'matched nothing in the 2 records read: "workAssignments[primaryIndicator=true].homeOrganizationalUnits[typeCode.codeValue=Department].nameCode.codeValue": no element of workAssignments[primaryIndicator=true].homeOrganizationalUnits matches [typeCode.codeValue=Department]'],
      ['phone', 'matched nothing in the 2 records read: "businessCommunication.mobiles[0].formattedNumber": businessCommunication has no "mobiles"; "person.communication.mobiles[0].formattedNumber": person has no "communication"'],
      ['title', 'matched nothing in the 2 records read: "workAssignments[1].jobTitle": workAssignments has no element [1]'],
      ['status', 'matched nothing in the 2 records read: "workerStatus.statusCode.codeValue": no record has "workerStatus"'],
      ['start_date', 'matched nothing in the 2 records read: "person.legalName.nickName": is null'],
    ]);
  });

  it('a field with a value in some record, or from one of its alternatives, is not named', () => {
    expect(read({ email: ['mail', 'businessCommunication.emails[0].emailUri'], title: 'workAssignments[primaryIndicator=true].homeOrganizationalUnits[0].nameCode.codeValue' })).toEqual([]);
  });

  it('columns and attributes (no paths) are named as empty or missing', () => {
    expect(read({ title: 'jobTitle' }, false)!.map((g) => gapText(g))).toEqual(['matched nothing in the 2 records read: "jobTitle": is empty or missing']);
  });

  it('runs (no coverage) carry no gaps', () => {
    const c = new SourceCollector({ source: 'hr', members: { fields: { id: 'associateOID', display_name: 'x' } } });
    c.addMember(jsonLookup(workers[0]), 'w0');
    expect(c.finish().fieldGaps).toBeUndefined();
  });
});
