/**
 * Value normalisation and per-field checks, shared by every connector: trimming, e-mail lower-casing,
 * phone numbers to E.164 (libphonenumber-js), status maps, and the text rules the platform needs.
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { DesiredMemberStatus } from '../domain/desired.js';
import type { PhoneCache } from '../domain/phone-cache.js';
import { fastE164 } from './phone/fast-path.js';

/** Longest accepted name, display name or title. */
export const MAX_NAME_LENGTH = 255;
/** Longest accepted description. */
export const MAX_DESCRIPTION_LENGTH = 1000;
/** Longest accepted source id. */
export const MAX_ID_LENGTH = 255;

/** A failed check: a stable reason code and the human sentence. */
export interface Problem {
  reason: string;
  message: string;
}

// C0 and C1 controls and DEL; tab and newlines included: none belongs in a name, an id or an address. Also the
// bidirectional controls (issue 44, "Trojan Source"): ALM, LRM/RLM, the embeddings and overrides U+202A-U+202E and
// the isolates U+2066-U+2069 reorder what a reviewer or an admin console shows ("Dana\u202Eevil" reads backwards).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffd]/;

/** The bidirectional controls among CONTROL (named as such in the quarantine message). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Checks a text field for characters the platform must not get. */
export function checkText(field: string, value: string, max: number): Problem | undefined {
  // One scan for the common case (nothing wrong); the exact problem is worked out only when there is one.
  if (value.length <= max && !SUSPECT.test(value)) return undefined;
  const ctl = CONTROL.exec(value);
  if (ctl) return { reason: 'control_characters', message: `${field} contains the ${BIDI.test(ctl[0]) ? 'bidirectional ' : ''}control character ${codePoint(ctl[0])}` };
  if (value.includes('\ufffd')) {
    return { reason: 'invalid_encoding', message: `${field} contains U+FFFD (bytes not valid in the configured encoding; check the source's encoding)` };
  }
  if (value.length > max) return { reason: field === 'source id' ? 'id_too_long' : 'name_too_long', message: `${field} is ${value.length} characters long (at most ${max})` };
  return undefined;
}

// Pragmatic address check: one @, a dot-atom local part, a domain of at least two labels; Unicode letters allowed.
const EMAIL = /^[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)+$/u;

// EMAIL for ASCII addresses (a lower-cased one): every match is a match of EMAIL, about three times cheaper (no \p{...}).
const EMAIL_ASCII = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;

/** Trims and lower-cases an e-mail address; a problem when it is not one. */
export function normaliseEmail(raw: string): { value: string } | Problem {
  const value = raw.trim().toLowerCase();
  // EMAIL admits exactly one "@" with a non-empty local part, so the character before it ends the local part.
  if (!(EMAIL_ASCII.test(value) || EMAIL.test(value)) || value.startsWith('.') || value.includes('..') || value.charCodeAt(value.indexOf('@') - 1) === 46 || value.length > 254) {
    return { reason: 'invalid_email', message: `invalid e-mail "${clip(raw)}"` };
  }
  return { value };
}

/**
 * Converts a phone number to E.164; national numbers need `region`. Plain shapes take the fast path (the verdict of
 * libphonenumber-js, see phone/fast-path.ts, about 0.5 µs); the others are asked of libphonenumber-js (10-20 µs)
 * unless `cache` (src/domain/phone-cache.ts, kept in the state DB) has the verdict of an earlier run; new verdicts, invalid ones
 * included, go into the cache. Plain shapes are not cached: checking them again costs less than loading them.
 */
export function normalisePhone(raw: string, region: string | undefined, cache?: PhoneCache): { value: string } | Problem {
  const text = raw.trim();
  let e164 = fastE164(text, region);
  if (e164 === undefined) {
    e164 = cache?.lookup(raw, region);
    if (e164 === undefined) {
      const parsed = parsePhoneNumberFromString(text, region as CountryCode | undefined);
      e164 = parsed && parsed.isValid() ? parsed.number : null;
      cache?.remember(raw, region, e164);
    }
  }
  if (e164 === null) {
    const hint = text.startsWith('+') || region ? '' : ' (no country code and no phone_region)';
    return { reason: 'invalid_phone', message: `invalid phone "${clip(raw)}"${hint}` };
  }
  return { value: e164 };
}


const CANONICAL: Record<string, DesiredMemberStatus> = { active: 'active', suspended: 'suspended', left: 'left' };

/** Translates a status value with the status map; values equal to active/suspended/left (any case) pass as they are. */
export function mapStatus(raw: string, map: Record<string, DesiredMemberStatus> | undefined): { value: DesiredMemberStatus } | Problem {
  const value = raw.trim();
  const mapped = map?.[value] ?? CANONICAL[value.toLowerCase()];
  if (mapped) return { value: mapped };
  return { reason: 'unknown_status', message: `status "${clip(value)}" is not in status_map` };
}

/** Parses an integer sort order. */
export function parseSortOrder(raw: string): { value: number } | Problem {
  const v = raw.trim();
  if (/^-?\d{1,9}$/.test(v)) return { value: Number(v) };
  return { reason: 'invalid_sort_order', message: `sort_order "${clip(v)}" is not an integer` };
}

/** Shortens a value for a message (a 10,000-character name is not repeated in full). */
export function clip(value: string, max = 60): string {
  return value.length > max ? `${value.slice(0, max)}...` : value;
}
