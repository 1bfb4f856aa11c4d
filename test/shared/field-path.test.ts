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

function genSteps(r: () => number): PathStep[] {
  const n = 1 + Math.floor(r() * 5);
  const steps: PathStep[] = [];
  for (let i = 0; i < n; i++) {
    const k = r();
    // A numeric key step reads as an index on arrays: keep generated keys non-numeric so records are unambiguous.
    let key = genName(r, true);
    if (/^\d+$/.test(key)) key += 'k';
    const prev = steps[steps.length - 1];
    // After a filter comes a key of the element it selects (or nothing), never its own filter key.
    if (prev?.kind === 'filter') {
      steps.push({ kind: 'key', key: key === prev.key ? `${key}n` : key });
      continue;
    }
    if (k < 0.5) steps.push({ kind: 'key', key });
    else if (k < 0.75) steps.push({ kind: 'index', index: Math.floor(r() * 4) });
    else steps.push({ kind: 'filter', key: genName(r, false), value: genName(r, true) });
  }
  return steps;
}

/** A record in which `steps` leads to `value`, with decoys around it. */
function plant(steps: PathStep[], value: unknown, r: () => number): unknown {
  let cur: unknown = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.kind === 'key') cur = { [`${s.key}~decoy`]: 'no', [s.key]: cur };
    else if (s.kind === 'index') {
      const arr: unknown[] = Array.from({ length: s.index }, () => 'decoy');
      arr.push(cur);
      cur = arr;
    } else {
      // The element a filter selects is an object (the next step is a key, or the planted value is an object); the
      // elements before it do not match.
      const el = { ...(cur as object), [s.key]: s.value };
      const before = Math.floor(r() * 3);
      cur = [...Array.from({ length: before }, () => ({ [s.key]: `${s.value}x` })), el];
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
