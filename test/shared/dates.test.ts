/**
 * The one date reader of every source (src/shared/dates.ts), with property tests on a seeded generator: every
 * accepted form of an instant or a calendar date reads back as that instant or date; "no date" forms are no date;
 * anything else is a problem that shows the value's shape, never the value.
 */
import { describe, expect, it } from 'vitest';
import { parseHrDate, valueShape, zonedTimeToUtc } from '../../src/shared/dates.js';
import { mulberry32 } from '../helpers/prng.js';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
const DAY = 86_400_000;
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `+hh:mm` / `-hhmm` for an offset in minutes. */
const offsetText = (minutes: number, colon: boolean) => `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${colon ? ':' : ''}${pad(Math.abs(minutes) % 60)}`;

/** The wall-clock text of `ms` at `offset` minutes east of UTC. */
const wallAt = (ms: number, offset: number) => new Date(ms + offset * 60_000).toISOString().slice(0, 19);

const accepted = (text: string, tz: string) => {
  const r = parseHrDate(text, tz);
  if (!('ms' in r)) throw new Error(`${text} in ${tz}: ${JSON.stringify(r)}`);
  return r;
};

describe('parseHrDate: property tests (seeded)', () => {
  it('every accepted form of an instant reads back as that instant', () => {
    const rnd = mulberry32(20261127);
    for (let i = 0; i < 800; i++) {
      // Whole seconds between 1970 and 2100, never exactly midnight UTC (that form is a calendar date, tested below).
      let ms = Math.floor(rnd() * 4_102_444_800) * 1000;
      if (ms % DAY === 0) ms += 1000;
      const tz = ZONES[Math.floor(rnd() * ZONES.length)]!;
      const offset = Math.round((rnd() * 28 - 14) * 4) * 15; // -14:00 .. +14:00 in quarter hours
      const forms = [
        new Date(ms).toISOString(),
        `${wallAt(ms, offset)}${offsetText(offset, true)}`,
        `${wallAt(ms, offset).replace('T', ' ')}${offsetText(offset, false)}`,
        `/Date(${ms})/`,
        `/Date(${ms}${offsetText(offset, false)})/`,
      ];
      for (const f of forms) expect(accepted(f, tz).ms, `${f} in ${tz}`).toBe(ms);
      // The OData forms are shown as ISO date-times.
      expect(accepted(`/Date(${ms}+0000)/`, tz).text).toBe(new Date(ms).toISOString());
    }
  });

  it('every accepted form of a calendar date reads back as that date, at its midnight in timezone:', () => {
    const rnd = mulberry32(4242);
    for (let i = 0; i < 800; i++) {
      const utcMidnight = Math.floor(rnd() * 47_482) * DAY; // 1970-01-01 .. 2099-12-31
      const d = new Date(utcMidnight);
      const iso = d.toISOString().slice(0, 10);
      const tz = ZONES[Math.floor(rnd() * ZONES.length)]!;
      const midnight = zonedTimeToUtc(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, 0, 0, 0, tz);
      for (const f of [iso, ` ${iso} `, `/Date(${utcMidnight})/`]) {
        const r = accepted(f, tz);
        expect(r, `${f} in ${tz}`).toEqual({ ms: midnight, dateOnly: true, text: iso });
      }
    }
  });

  it('empty values and 0000-00-00 are no date', () => {
    for (const t of ['', '   ', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00T00:00']) expect(parseHrDate(t, 'UTC')).toEqual({ none: true });
  });

  it('anything else is a problem that names the shape of the value, never the value', () => {
    const rnd = mulberry32(99);
    const alphabet = '0123456789abcXYZäß./-: ';
    for (let i = 0; i < 800; i++) {
      const len = 1 + Math.floor(rnd() * 16);
      let t = '';
      for (let j = 0; j < len; j++) t += alphabet[Math.floor(rnd() * alphabet.length)];
      const r = parseHrDate(t, 'UTC');
      if (!('problem' in r)) continue;
      expect(r.problem).toContain(`"${valueShape(t.trim())}"`);
      // No digit or letter of the value survives into the message's quoted part.
      expect(/"[^"]*"/.exec(r.problem)![0]).toMatch(/^"[da\W_]*"$/u);
    }
  });

  it('names the shapes it was given', () => {
    const problem = (t: string) => {
      const r = parseHrDate(t, 'UTC');
      return 'problem' in r ? r.problem : JSON.stringify(r);
    };
    expect(problem('27.11.2026')).toBe('expected a date like 2026-11-27, got "dd.dd.dddd"');
    expect(problem('Nov 27, 2026')).toBe('expected a date like 2026-11-27, got "aaa dd, dddd"');
    expect(problem('2026-13-01')).toBe('"dddd-dd-dd" is not a calendar date (a month, day or time out of range)');
    expect(problem('/Date(1618796144000+2500)/')).toBe('"/aaaa(ddddddddddddd+dddd)/" is not a valid date (the offset is out of range)');
    expect(problem('/Date(abc)/')).toBe('expected a date like 2026-11-27, got "/aaaa(aaa)/"');
  });

  it('reads the vendors\' own examples', () => {
    // SuccessFactors: Edm.DateTime at midnight UTC is a date; with an offset it is an instant.
    expect(accepted('/Date(1764460800000)/', 'Europe/Berlin')).toEqual({ ms: Date.UTC(2025, 10, 29, 23), dateOnly: true, text: '2025-11-30' });
    expect(accepted('/Date(1618796144000+0000)/', 'Europe/Berlin')).toEqual({ ms: 1618796144000, dateOnly: false, text: '2021-04-19T01:35:44.000Z' });
    // Graph (UTC), Personio (an offset), Workday (xs:date with a zone).
    expect(accepted('2014-01-01T00:00:00Z', 'Europe/Berlin').ms).toBe(Date.UTC(2014, 0, 1));
    expect(accepted('2019-08-01T00:00:00+02:00', 'UTC').ms).toBe(Date.UTC(2019, 6, 31, 22));
    expect(accepted('2026-01-05-08:00', 'UTC').ms).toBe(Date.UTC(2026, 0, 5, 8));
  });
});
