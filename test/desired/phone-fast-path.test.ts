/**
 * The phone fast path (src/desired/phone/fast-path.ts) must give libphonenumber-js's verdict for every input it
 * answers: compared here over every country's example numbers (libphonenumber-js/examples.mobile.json) in national,
 * formatted and international form, with the right region, another region and none, and over seeded random digit
 * strings; and normalisePhone as a whole (fast path or library) must equal the library on all of them.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { getCountries, getCountryCallingCode, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { normalisePhone } from '../../src/desired/index.js';
import { fastE164 } from '../../src/desired/phone/fast-path.js';
import { mulberry32 as prng } from '../helpers/prng.js';

const examples = createRequire(import.meta.url)('libphonenumber-js/examples.mobile.json') as Record<string, string>;

/** The verdict the connector had before the fast path: libphonenumber-js alone. */
function library(text: string, region: string | undefined): string | null {
  const p = parsePhoneNumberFromString(text.trim(), region as CountryCode | undefined);
  return p && p.isValid() ? p.number : null;
}

/** "(201) 555-0123"-like groupings of a digit string. */
function formats(digits: string): string[] {
  const out = [digits];
  if (digits.length > 6) {
    out.push(`(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`);
    out.push(`${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6)}`);
    out.push(` ${digits.slice(0, 2)} ${digits.slice(2, 5)} ${digits.slice(5)} `);
  }
  return out;
}

function cases(): [string, string | undefined][] {
  const rand = prng(19);
  const countries = getCountries();
  const out: [string, string | undefined][] = [];
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
  for (const c of countries) {
    const cc = getCountryCallingCode(c);
    const other = countries[Math.floor(rand() * countries.length)]!;
    const nsns = [examples[c], digits(7 + Math.floor(rand() * 6)), digits(3 + Math.floor(rand() * 15))].filter((x): x is string => x !== undefined);
    // Example numbers one digit short or long, and with one digit changed: valid shapes that are not valid numbers.
    if (examples[c]) {
      const e = examples[c];
      nsns.push(e.slice(0, -1), `${e}${Math.floor(rand() * 10)}`, `${e.slice(0, -2)}${digits(2)}`, `0${e}`, `1${e}`);
    }
    for (const n of nsns) {
      for (const f of formats(n)) {
        out.push([f, c], [f, other], [f, undefined]);
        out.push([`+${cc}${f}`, undefined], [`+${cc} ${f}`, c], [`+${cc}${f}`, other]);
      }
      out.push([`${cc}${n}`, c], [`00${cc}${n}`, c], [`011${cc}${n}`, c], [`+0${n}`, c], [`+${n}`, undefined]);
    }
  }
  // Odd but plain shapes.
  for (const t of ['+', '+1', '12', '()', '+44', '+1 (', '---', '(((555)))', '+800 1234 5678', '+979 123456789', '+1 800 555 0199', '+1 242 357 1234', '+7 700 000 0000']) out.push([t, 'US'], [t, undefined]);
  return out;
}

describe('the phone fast path', () => {
  it('gives libphonenumber-js verdict on every input it answers, and normalisePhone equals the library on all', () => {
    let answered = 0;
    const all = cases();
    for (const [text, region] of all) {
      const want = library(text, region);
      const fast = fastE164(text.trim(), region);
      if (fast !== undefined) {
        answered++;
        expect({ text, region, e164: fast }).toEqual({ text, region, e164: want });
      }
      const r = normalisePhone(text, region);
      expect({ text, region, e164: 'value' in r ? r.value : null }).toEqual({ text, region, e164: want });
    }
    // Most inputs are plain shapes: the fast path answers them (a disabled fast path fails here).
    expect(all.length).toBeGreaterThan(10_000);
    expect(answered / all.length).toBeGreaterThan(0.6);
  });

  it('validates E.164 input as the library does: a "+" and digits is not valid by itself', () => {
    expect(fastE164('+12015550123', undefined)).toBe('+12015550123');
    expect(fastE164('(201) 555-0123', 'US')).toBe('+12015550123');
    expect(fastE164('+442079460958', 'US')).toBe('+442079460958');
    // Wrong length for the country, an area code that does not exist, a calling code that does not exist.
    expect(fastE164('+1201555012', undefined)).toBeNull();
    expect(fastE164('+12010550123', undefined)).toBeNull();
    expect(library('+12010550123', undefined)).toBeNull();
    expect(library('+1201555012', undefined)).toBeNull();
    // Not plain: left to the library.
    expect(fastE164('+1 201 555 0123 ext. 7', undefined)).toBeUndefined();
    expect(fastE164('1 201 555 0123', 'US')).toBeUndefined();
    expect(fastE164('030 901820', 'DE')).toBeUndefined();
    expect(normalisePhone('030 901820', 'DE')).toEqual({ value: '+4930901820' });
  });
});
