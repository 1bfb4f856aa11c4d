/**
 * Required placeholders (issue 45): `{!name}` empties the whole template when its value is empty, so a list of
 * alternatives moves on: "preferred first name, else legal first name" reads as a user means it.
 */
import { describe, expect, it } from 'vitest';
import { compileField, getPath } from '../../src/desired/index.js';
import { parseConfig } from '../../src/config/load.js';

const lookupOf = (rec: Record<string, unknown>) => (name: string) => getPath(rec, name);
const NAME = ['{!preferred_first_name} {last_name}', '{first_name} {last_name}'];

describe('required placeholders', () => {
  it('a preferred name wins when there is one; without it the next alternative, never the last name alone', () => {
    const read = (rec: Record<string, unknown>) => compileField(NAME).read(lookupOf(rec));
    expect(read({ first_name: 'Alejandra', preferred_first_name: 'Ale', last_name: 'Jimenez' })).toEqual({ ok: true, value: 'Ale Jimenez' });
    expect(read({ first_name: 'Alejandra', preferred_first_name: null, last_name: 'Jimenez' })).toEqual({ ok: true, value: 'Alejandra Jimenez' });
    expect(read({ first_name: 'Alejandra', preferred_first_name: '  ', last_name: 'Jimenez' })).toEqual({ ok: true, value: 'Alejandra Jimenez' });
    expect(read({ first_name: 'Alejandra', last_name: 'Jimenez' })).toEqual({ ok: true, value: 'Alejandra Jimenez' });
    // Without `!` the first template is not empty (it holds the last name): the old behaviour, kept.
    expect(compileField(['{preferred_first_name} {last_name}', '{first_name} {last_name}']).read(lookupOf({ first_name: 'Alejandra', last_name: 'Jimenez' }))).toEqual({ ok: true, value: 'Jimenez' });
  });

  it('names the placeholder without its mark, reads nested paths, and a template of required parts alone', () => {
    expect(compileField(NAME).names).toEqual(['preferred_first_name', 'last_name', 'first_name', 'last_name']);
    expect(compileField('{ !person.legalName.nickName } {person.legalName.familyName1}').read(lookupOf({ person: { legalName: { nickName: 'Stan', familyName1: 'Albright' } } }))).toEqual({
      ok: true,
      value: 'Stan Albright',
    });
    expect(compileField('{!a}-{!b}').read(lookupOf({ a: 'x' }))).toEqual({ ok: true, value: '' });
    expect(compileField('{!a}-{!b}').read(lookupOf({ a: 'x', b: 'y' }))).toEqual({ ok: true, value: 'x-y' });
  });

  it('the config accepts `{!path}` in hris-json fields and names a malformed path inside one', () => {
    const base = (name: string) => `platform: { base_url: https://x.example/api, api_key: ek_live_0123456789abcdef }\nsync: { id: s }\nsources:\n  - name: hr\n    type: hris-json\n    members:\n      file: m.json\n      fields:\n        id: id\n        display_name: ${name}\n`;
    expect(() => parseConfig(base('["{!preferred_first_name} {last_name}", "{first_name} {last_name}"]'), 'c.yaml', {})).not.toThrow();
    expect(() => parseConfig(base('"{!emails[primary=true} {last_name}"'), 'c.yaml', {})).toThrow(/invalid field path "emails\[primary=true" at character 7/);
  });
});
