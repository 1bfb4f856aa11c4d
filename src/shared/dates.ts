/**
 * Dates from HR sources: ISO dates (`2026-03-01`) and date-times with or without an offset
 * (`2026-03-01T09:00`, `2026-03-01 09:00:00`, `2026-03-01T09:00:00Z`, `...+01:00`). A date or a date-time without an
 * offset is read in the config's `timezone:` (a date is its midnight there). Pure; the time zone rules are Intl's.
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

/** A parsed date: the instant, and whether the source gave only a date. */
export type ParsedDate = { ms: number; dateOnly: boolean } | { problem: string };

/** Parses a source's date or date-time in `timeZone`. */
export function parseHrDate(text: string, timeZone: string): ParsedDate {
  const m = ISO.exec(text.trim());
  if (!m) return { problem: `"${text.length > 40 ? `${text.slice(0, 40)}...` : text}" is not an ISO date (2026-03-01) or date-time (2026-03-01T09:00:00, with or without an offset)` };
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const Y = Number(y);
  const M = Number(mo);
  const D = Number(d);
  const check = new Date(Date.UTC(Y, M - 1, D));
  if (check.getUTCFullYear() !== Y || check.getUTCMonth() !== M - 1 || check.getUTCDate() !== D || Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s ?? 0) > 59) {
    return { problem: `"${text}" is not a valid date` };
  }
  const msPart = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  if (off) {
    const utc = Date.UTC(Y, M - 1, D, Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), msPart);
    if (off.toUpperCase() === 'Z') return { ms: utc, dateOnly: false };
    const sign = off.startsWith('-') ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    return { ms: utc - sign * minutes * 60_000, dateOnly: false };
  }
  return { ms: zonedTimeToUtc(Y, M, D, Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), msPart, timeZone), dateOnly: h === undefined };
}

/** An Active Directory FILETIME (100 ns intervals since 1601-01-01 UTC) as ms since the epoch; 0 and 2^63-1 mean never. */
export function fileTimeToMs(raw: string): number | undefined {
  const t = raw.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const v = BigInt(t);
  if (v === 0n || v >= 9223372036854775807n) return undefined;
  return Number(v / 10_000n - 11644473600000n);
}
