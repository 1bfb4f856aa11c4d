/**
 * The field path grammar (src/shared/field-path.ts, docs/sources/field-paths.md): examples from real payloads, the
 * errors, and property tests with a seeded generator of our own (no property-testing dependency): every generated
 * path survives format -> parse unchanged, and reading a generated record along a generated path finds the value
 * that was planted there.
 */
import { describe, expect, it } from 'vitest';
import { compilePath, formatPath, parsePath, PathSyntaxError, WrongType, type PathStep } from '../../src/shared/field-path.js';
import { mulberry32 as rng } from '../helpers/prng.js';

const SCIM_ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('field paths: examples', () => {
  const graphUser = { id: 'u1', businessPhones: ['+1 425 555 0109', '+1 425 555 0110'], mail: null, department: 'Sales' };
  const scimUser = {
    id: 'a1',
    emails: [
      { value: 'home@example.com', type: 'home', primary: false },
      { value: 'work@example.com', type: 'work', primary: true },
    ],
    phoneNumbers: [{ value: '+1 555 0100', type: 'work' }, { value: '+1 555 0199', type: 'mobile' }],
    [SCIM_ENTERPRISE]: { department: 'Engineering', manager: { value: 'm1' } },
    'a.b': { c: 1 },
  };

  it('reads keys with colons and dots (quoted), indexes and filters', () => {
    expect(compilePath(`"${SCIM_ENTERPRISE}".department`).get(scimUser)).toBe('Engineering');
    expect(compilePath(`"${SCIM_ENTERPRISE}".manager.value`).get(scimUser)).toBe('m1');
    expect(compilePath('emails[primary=true].value').get(scimUser)).toBe('work@example.com');
    expect(compilePath('phoneNumbers[type=mobile].value').get(scimUser)).toBe('+1 555 0199');
    expect(compilePath('phoneNumbers[type=fax].value').get(scimUser)).toBeUndefined();
    expect(compilePath('businessPhones[0]').get(graphUser)).toBe('+1 425 555 0109');
    expect(compilePath('businessPhones[5]').get(graphUser)).toBeUndefined();
    expect(compilePath('businessPhones.1').get(graphUser)).toBe('+1 425 555 0110');
    expect(compilePath('"a.b".c').get(scimUser)).toBe(1);
    expect(compilePath('mail').get(graphUser)).toBeNull();
    expect(compilePath('mail.address').get(graphUser)).toBeUndefined();
    expect(compilePath('').get(graphUser)).toBe(graphUser);
    expect(compilePath('[1].x').get([{ x: 1 }, { x: 2 }])).toBe(2);
  });

  it('filters on nested keys and on several keys, picks the first or the last match, and counts indexes from the end (issue 45)', () => {
    // The shape of an ADP Workforce Now worker (organisational units of several types) and Gusto's terminations.
    const worker = {
      workAssignments: [
        { primaryIndicator: false, homeOrganizationalUnits: [{ typeCode: { codeValue: 'Department' }, nameCode: { codeValue: '104000', shortName: 'R&D' } }] },
        {
          primaryIndicator: true,
          homeOrganizationalUnits: [
            { typeCode: { codeValue: 'Business Unit' }, nameCode: { codeValue: 'CORP', shortName: 'Corporate' } },
            { typeCode: { codeValue: 'Department' }, nameCode: { codeValue: '601000', shortName: 'Information Technology' } },
          ],
        },
      ],
      terminations: [
        { active: true, effective_date: '2021-03-31' },
        { active: false, effective_date: '2027-01-15' },
        { active: true, effective_date: '2024-06-30' },
      ],
    };
    const dept = 'workAssignments[primaryIndicator=true].homeOrganizationalUnits[typeCode.codeValue=Department].nameCode';
    expect(compilePath(`${dept}.codeValue`).get(worker)).toBe('601000');
    expect(compilePath(`${dept}.shortName`).get(worker)).toBe('Information Technology');
    expect(compilePath('workAssignments[0].homeOrganizationalUnits[typeCode.codeValue=Department].nameCode.codeValue').get(worker)).toBe('104000');
    expect(compilePath('workAssignments[primaryIndicator=true].homeOrganizationalUnits[typeCode.codeValue=Cost Number].nameCode.codeValue').get(worker)).toBeUndefined();
    expect(compilePath('workAssignments[primaryIndicator=true,homeOrganizationalUnits.0.nameCode.codeValue=CORP].primaryIndicator').get(worker)).toBe(true);
    expect(compilePath('workAssignments[primaryIndicator=false,homeOrganizationalUnits.0.nameCode.codeValue=CORP]').get(worker)).toBeUndefined();
    expect(compilePath('terminations[active=true].effective_date').get(worker)).toBe('2021-03-31');
    expect(compilePath('terminations[first:active=true].effective_date').get(worker)).toBe('2021-03-31');
    expect(compilePath('terminations[last:active=true].effective_date').get(worker)).toBe('2024-06-30');
    expect(compilePath('terminations[-1].effective_date').get(worker)).toBe('2024-06-30');
    expect(compilePath('terminations[-2].effective_date').get(worker)).toBe('2027-01-15');
    expect(compilePath('terminations[-4].effective_date').get(worker)).toBeUndefined();
    expect(compilePath('a[ "x.y"=1, b=", ]"]').get({ a: [{ 'x.y': 1, b: ', ]' }] })).toEqual({ 'x.y': 1, b: ', ]' });
    expect(formatPath(parsePath('a[ "x.y"=1, b=", ]"]'))).toBe('a["x.y"=1,b=", ]"]');
    expect(formatPath(parsePath('u[last:typeCode.codeValue=Department].n'))).toBe('u[last:typeCode.codeValue=Department].n');
  });

  it('names a value of the wrong JSON type, never walks through it', () => {
    const got = compilePath('department.id').get(graphUser);
    expect(got).toBeInstanceOf(WrongType);
    expect((got as WrongType).message).toBe('department is a string, expected an object with "id"');
    expect((compilePath('emails.value').get(scimUser) as WrongType).message).toBe('emails is an array, expected an object with "value"');
    expect((compilePath('department[0]').get(graphUser) as WrongType).message).toBe('department is a string, expected an array');
    expect((compilePath(`"${SCIM_ENTERPRISE}".department[type=x]`).get(scimUser) as WrongType).message).toBe(`"${SCIM_ENTERPRISE}".department is a string, expected an array`);
  });

  it('rejects malformed paths with the place', () => {
    const err = (p: string) => {
      try {
        parsePath(p);
      } catch (e) {
        expect(e).toBeInstanceOf(PathSyntaxError);
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(err('a..b')).toBe('invalid field path "a..b" at character 3: a name is missing before "."');
    expect(err('a.')).toBe('invalid field path "a." at character 3: a name is missing at the end');
    expect(err('emails[primary=true')).toBe('invalid field path "emails[primary=true" at character 7: a "[" is not closed');
    expect(err('phones[x]')).toBe('invalid field path "phones[x]" at character 7: [x] is neither an index (a number from 0) nor a filter (key=value)');
    expect(err('"urn:x.value')).toBe('invalid field path "\\"urn:x.value" at character 12: a quoted name is not closed');
    expect(err('a[b=1,]')).toBe('invalid field path "a[b=1,]" at character 7: a key is missing before "]"');
    expect(err('a[last:b]')).toBe('invalid field path "a[last:b]" at character 2: a condition needs key=value, found "]"');
    expect(err('a]')).toBe('invalid field path "a]" at character 2: unexpected "]" (quote names that contain . [ ] or ")');
  });
});

const ALPHABET = ['a', 'b', 'Z', '0', '7', '_', '-', ':', '.', '[', ']', '"', '\\', '=', ' ', '@', 'é', '/'];

function genName(r: () => number, allowEmpty: boolean): string {
  const len = Math.floor(r() * 6) + (allowEmpty ? 0 : 1);
  let s = '';
  for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
  return s;
}

/** A filter of one to three conditions on distinct keys (some nested), first or last. */
function genFilter(r: () => number): PathStep {
  const n = 1 + Math.floor(r() * 3);
  const where: { key: string[]; value: string }[] = [];
  const firsts = new Set<string>();
  for (let i = 0; i < n; i++) {
    const key = [genName(r, false)];
    while (r() < 0.3) key.push(genName(r, false));
    // Distinct first names: two conditions on one key could not both hold.
    if (firsts.has(key[0]!)) continue;
    firsts.add(key[0]!);
    where.push({ key, value: genName(r, true) });
  }
  return { kind: 'filter', where, last: r() < 0.4 };
}

function genSteps(r: () => number): PathStep[] {
  const n = 1 + Math.floor(r() * 5);
  const steps: PathStep[] = [];
  for (let i = 0; i < n; i++) {
    const k = r();
    // A numeric key step reads as an index on arrays: keep generated keys non-numeric so records are unambiguous.
    let key = genName(r, true);
    if (/^\d+$/.test(key)) key += 'k';
    const prev = steps[steps.length - 1];
    // After a filter comes a key of the element it selects (or nothing), never one of its own condition keys.
    if (prev?.kind === 'filter') {
      const taken = new Set(prev.where.map((w) => w.key[0]));
      while (taken.has(key)) key += 'n';
      steps.push({ kind: 'key', key });
      continue;
    }
    if (k < 0.5) steps.push({ kind: 'key', key });
    else if (k < 0.75) steps.push({ kind: 'index', index: r() < 0.3 ? -1 - Math.floor(r() * 3) : Math.floor(r() * 4) });
    else steps.push(genFilter(r));
  }
  return steps;
}

/** An object holding `value` at the nested key `key`. */
function nested(key: string[], value: unknown): Record<string, unknown> {
  let cur: unknown = value;
  for (let i = key.length - 1; i >= 0; i--) cur = { [key[i]!]: cur };
  return cur as Record<string, unknown>;
}

/** A record in which `steps` leads to `value`, with decoys around it. */
function plant(steps: PathStep[], value: unknown, r: () => number): unknown {
  let cur: unknown = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.kind === 'key') cur = { [`${s.key}~decoy`]: 'no', [s.key]: cur };
    else if (s.kind === 'index' && s.index >= 0) {
      const arr: unknown[] = Array.from({ length: s.index }, () => 'decoy');
      arr.push(cur);
      cur = arr;
    } else if (s.kind === 'index') {
      // [-k]: the k-th element from the end.
      const arr: unknown[] = Array.from({ length: Math.floor(r() * 3) }, () => 'decoy');
      arr.push(cur, ...Array.from({ length: -s.index - 1 }, () => 'decoy'));
      cur = arr;
    } else {
      // The element a filter selects is an object (the next step is a key, or the planted value is an object) that
      // meets every condition; elements that miss one condition surround it, and an element meeting them all but
      // holding nothing stands on the side the filter does not pick (after it for the first, before it for the last).
      let el: Record<string, unknown> = { ...(cur as object) };
      for (const w of s.where) el = { ...el, ...nested(w.key, w.value) };
      const miss = () => {
        let d: Record<string, unknown> = {};
        const off = Math.floor(r() * s.where.length);
        s.where.forEach((w, j) => (d = { ...d, ...nested(w.key, j === off ? `${w.value}x` : w.value) }));
        return d;
      };
      const twin = () => {
        let d: Record<string, unknown> = {};
        for (const w of s.where) d = { ...d, ...nested(w.key, w.value) };
        return d;
      };
      const before = Array.from({ length: Math.floor(r() * 3) }, miss);
      const after = Array.from({ length: Math.floor(r() * 2) }, miss);
      cur = s.last ? [twin(), ...before, el, ...after] : [...before, el, ...after, twin()];
    }
  }
  return cur;
}

describe('field paths: properties (seeded)', () => {
  it('format then parse gives the same steps (2,000 generated paths)', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const steps = genSteps(rng(seed));
      const text = formatPath(steps);
      expect(parsePath(text), `seed ${seed}: ${text}`).toEqual(steps);
    }
  });

  it('a value planted along a generated path is found there (2,000 generated records)', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const steps = genSteps(r);
      // A filter as the last step selects an element (an object): plant an object then.
      const lastIsFilter = steps[steps.length - 1]!.kind === 'filter';
      const value = lastIsFilter ? { planted: seed } : `v${seed}`;
      const record = plant(steps, value, r);
      const got = compilePath(formatPath(steps)).get(record);
      if (lastIsFilter) expect(got, `seed ${seed}: ${formatPath(steps)}`).toMatchObject({ planted: seed });
      else expect(got, `seed ${seed}: ${formatPath(steps)}`).toBe(value);
    }
  });

  it('no generated text makes the parser throw anything but a PathSyntaxError', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const text = Array.from({ length: Math.floor(r() * 12) }, () => ALPHABET[Math.floor(r() * ALPHABET.length)]).join('');
      try {
        const steps = parsePath(text);
        // What parses formats back to something that parses to the same steps.
        expect(parsePath(formatPath(steps)), `seed ${seed}: ${text}`).toEqual(steps);
      } catch (e) {
        expect(e, `seed ${seed}: ${text}`).toBeInstanceOf(PathSyntaxError);
      }
    }
  });
});
