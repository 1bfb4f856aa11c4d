/**
 * Dates from HR sources, one reader for every source: ISO dates (`2026-03-01`) and date-times with or without an
 * offset (`2026-03-01T09:00`, `2026-03-01 09:00:00`, `2026-03-01T09:00:00Z`, `...+01:00`), and OData v2's
 * `/Date(ms)/` and `/Date(ms+hhmm)/`. A date or a date-time without an offset is read in the config's `timezone:` (a
 * date is its midnight there). Pure; the time zone rules are Intl's.
 */

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The offset of `timeZone` from UTC at the instant `utcMs`, in minutes (Berlin in winter: 60). */
export function zoneOffsetMinutes(utcMs: number, timeZone: string): number {
  let f = offsetFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    offsetFormatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(utcMs)).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / 60_000);
}

/** The instant of a wall-clock time in `timeZone` (the earlier one in a repeated hour, the later side of a gap). */
export function zonedTimeToUtc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, timeZone: string): number {
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  let guess = wall - zoneOffsetMinutes(wall, timeZone) * 60_000;
  guess = wall - zoneOffsetMinutes(guess, timeZone) * 60_000;
  return guess;
}

/**
 * A parsed date: the instant, whether the source gave only a date, and the text to show (the source's own text for
 * ISO forms, an ISO date or date-time for `/Date(...)/`); `none` when the value says "no date"; or the problem.
 */
export type ParsedDate = { ms: number; dateOnly: boolean; text: string } | { none: true } | { problem: string };

/** `/Date(ms)/` or `/Date(ms+hhmm)/` (OData v2 JSON, SAP SuccessFactors): milliseconds since the epoch, UTC. */
const ODATA_V2 = /^\/Date\((-?\d{1,15})([+-]\d{4})?\)\/$/;

/** `0000-00-00` (BambooHR's "no date"), with or without a zero time. */
const ZERO_DATE = /^0000-00-00(?:[T ]00:00(?::00)?)?$/;

const DAY_MS = 86_400_000;

/**
 * The shape of a value, not the value (messages and logs must not carry personal data): digits become `d`, letters
 * `a`, anything else stays; cut at 40 characters.
 */
export function valueShape(text: string): string {
  const shape = text.replace(/\p{Nd}|\p{L}/gu, (ch) => (/\p{Nd}/u.test(ch) ? 'd' : 'a'));
  return shape.length > 40 ? `${shape.slice(0, 40)}...` : shape;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Parses a source's date or date-time in `timeZone`: ISO dates and date-times (with or without an offset), and the
 * OData v2 forms `/Date(ms)/` and `/Date(ms+hhmm)/`. A `/Date(ms)/` without an offset at exactly midnight UTC is a
 * calendar date (how OData v2 sends Edm.DateTime dates such as SuccessFactors' hireDate), read like `2026-03-01`;
 * any other is that instant (the offset names the zone it was entered in; the milliseconds are UTC already). Empty,
 * `0000-00-00` and a zero time are no date.
 */
export function parseHrDate(raw: string, timeZone: string): ParsedDate {
  const text = raw.trim();
  if (text === '' || ZERO_DATE.test(text)) return { none: true };
  const od = ODATA_V2.exec(text);
  if (od) {
    const ms = Number(od[1]);
    if (!Number.isSafeInteger(ms) || Math.abs(ms) > 8.64e15) return { problem: `"${valueShape(text)}" is not a valid date (the milliseconds are out of range)` };
    if (od[2] !== undefined && (Number(od[2].slice(1, 3)) > 23 || Number(od[2].slice(3)) > 59)) return { problem: `"${valueShape(text)}" is not a valid date (the offset is out of range)` };
    if (od[2] === undefined && ms % DAY_MS === 0) return parseIso(isoDay(ms), timeZone);
    return { ms, dateOnly: false, text: new Date(ms).toISOString() };
  }
  return parseIso(text, timeZone);
}

function parseIso(text: string, timeZone: string): ParsedDate {
  const m = ISO.exec(text);
  if (!m) return { problem: `expected a date like 2026-11-27, got "${valueShape(text)}"` };
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const Y = Number(y);
  const M = Number(mo);
  const D = Number(d);
  const check = new Date(Date.UTC(Y, M - 1, D));
  if (check.getUTCFullYear() !== Y || check.getUTCMonth() !== M - 1 || check.getUTCDate() !== D || Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s ?? 0) > 59) {
    return { problem: `"${valueShape(text)}" is not a calendar date (a month, day or time out of range)` };
  }
  const msPart = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  if (off) {
    const utc = Date.UTC(Y, M - 1, D, Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), msPart);
    if (off.toUpperCase() === 'Z') return { ms: utc, dateOnly: false, text };
    const sign = off.startsWith('-') ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    return { ms: utc - sign * minutes * 60_000, dateOnly: false, text };
  }
  return { ms: zonedTimeToUtc(Y, M, D, Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), msPart, timeZone), dateOnly: h === undefined, text };
}

/** An Active Directory FILETIME (100 ns intervals since 1601-01-01 UTC) as ms since the epoch; 0 and 2^63-1 mean never. */
export function fileTimeToMs(raw: string): number | undefined {
  const t = raw.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const v = BigInt(t);
  if (v === 0n || v >= 9223372036854775807n) return undefined;
  return Number(v / 10_000n - 11644473600000n);
}
