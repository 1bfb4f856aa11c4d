/**
 * The phone fast path (issue 19): the verdict of libphonenumber-js's `parsePhoneNumberFromString(text, region)` +
 * `isValid()` for the plain shapes HR exports use — "+12015550123", "(201) 555-0123", "201.555.0123" — without its
 * per-call cost. libphonenumber-js builds a new RegExp from its metadata for every pattern it tries (about 60% of a
 * 300,000-member CSV read); here the same metadata (the library's own `Metadata`, the same `min` set as the default
 * export) is compiled once per country and the same steps are taken in the same order.
 *
 * Only inputs of digits, spaces, "(", ")", "." and "-" with an optional leading "+" are handled, and only when no
 * step of the library's parse would transform the digits: an IDD prefix ("011..."), the region's calling code
 * without "+" ("1 201..."), a national prefix or carrier code ("0...", "1..."), a non-geographic calling code
 * (+800) or a leading "+0" all return undefined, and the caller asks libphonenumber-js itself. So a "+" and digits
 * are NOT taken as valid: the national number must match the country's number pattern and one of its number types
 * (fixed line, mobile, toll free, ...) with that type's lengths, exactly as `isValid()` checks it.
 * test/desired/phone-fast-path.test.ts compares both over every country's example numbers and random digit strings.
 */
import { Metadata } from 'libphonenumber-js';

/** The parts of libphonenumber-js's Metadata class used here (public in its source; its typings declare fewer). */
interface LibNumberingPlan {
  callingCode(): string;
  IDDPrefix(): string;
  nationalPrefixForParsing(): string | undefined;
  nationalNumberPattern(): string;
  leadingDigits(): string | undefined;
  hasTypes(): boolean;
  type(type: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}
interface LibMetadata {
  hasCountry(country: string): boolean;
  hasCallingCode(callingCode: string): boolean;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
  selectNumberingPlan(country: string): LibMetadata;
  numberingPlan: LibNumberingPlan;
}

/** Every number type `getNumberType()` tries; a number is valid when one matches. */
const TYPES = ['FIXED_LINE', 'MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'];
/** libphonenumber-js constants: MAX_INPUT_STRING_LENGTH, MIN_LENGTH_FOR_NSN, MAX_LENGTH_FOR_NSN. */
const MAX_INPUT = 250;
const MIN_NSN = 2;
const MAX_NSN = 17;
/** The shapes handled: every other character (letters, "x", "#", ";", full-width digits, "tel:") goes to the library. */
const SIMPLE = /^\+?[0-9 ().-]+$/;
const NON_DIGITS = /[^0-9]/g;
/** A two-letter country (not "001", the library's non-geographic entry). */
const COUNTRY = /^[A-Z]{2}$/;

/** One country's metadata, compiled once. */
interface CompiledPlan {
  callingCode: string;
  idd: RegExp;
  nationalPrefix: RegExp | undefined;
  nationalNumber: RegExp;
  leadingDigits: RegExp | undefined;
  hasTypes: boolean;
  types: { lengths: number[] | undefined; pattern: RegExp }[];
}

let metadata: LibMetadata | undefined;
const plans = new Map<string, CompiledPlan>();

function lib(): LibMetadata {
  return (metadata ??= new Metadata() as unknown as LibMetadata);
}

function planOf(country: string): CompiledPlan {
  let plan = plans.get(country);
  if (plan) return plan;
  const p = lib().selectNumberingPlan(country).numberingPlan;
  const npfp = p.nationalPrefixForParsing();
  const leading = p.leadingDigits();
  const types: CompiledPlan['types'] = [];
  for (const name of TYPES) {
    const t = p.type(name);
    if (t && t.pattern()) types.push({ lengths: t.possibleLengths(), pattern: new RegExp(`^(?:${t.pattern()})$`) });
  }
  plan = {
    callingCode: p.callingCode(),
    // As stripIddPrefix and extractNationalNumberFromPossiblyIncompleteNumber build them.
    idd: new RegExp(p.IDDPrefix()),
    nationalPrefix: npfp ? new RegExp(`^(?:${npfp})`) : undefined,
    nationalNumber: new RegExp(`^(?:${p.nationalNumberPattern()})$`),
    leadingDigits: leading ? new RegExp(leading) : undefined,
    hasTypes: p.hasTypes(),
    types,
  };
  plans.set(country, plan);
  return plan;
}

const regionPlans = new Map<string, CompiledPlan | null>();

/** The plan of a default region, null when libphonenumber-js does not know it (the library then ignores it). */
function regionPlanOf(region: string): CompiledPlan | undefined {
  let plan = regionPlans.get(region);
  if (plan === undefined) {
    plan = COUNTRY.test(region) && lib().hasCountry(region) ? planOf(region) : null;
    regionPlans.set(region, plan);
  }
  return plan ?? undefined;
}

/** getNumberType(...) !== undefined: the national pattern and one number type (with its lengths) match. */
function hasType(plan: CompiledPlan, nn: string): boolean {
  if (!plan.nationalNumber.test(nn)) return false;
  for (const t of plan.types) if ((t.lengths === undefined || t.lengths.includes(nn.length)) && t.pattern.test(nn)) return true;
  return false;
}

/**
 * The E.164 form of a trimmed phone text when libphonenumber-js would call it valid, null when it would call it
 * invalid, undefined when the text is not a shape handled here (ask libphonenumber-js).
 */
export function fastE164(text: string, region: string | undefined): string | null | undefined {
  if (text.length > MAX_INPUT || !SIMPLE.test(text)) return undefined;
  const digits = text.replace(NON_DIGITS, '');
  if (digits.length < 3) return undefined;
  const meta = lib();
  let callingCode: string;
  let rest: string;
  let prefixPlan: CompiledPlan;
  let country: string | undefined;
  if (text.charCodeAt(0) === 43 /* + */) {
    if (digits.charCodeAt(0) === 48 /* 0 */) return undefined;
    let i = 1;
    while (i <= 3 && i <= digits.length && !meta.hasCallingCode(digits.slice(0, i))) i++;
    if (i > 3 || i > digits.length) return undefined;
    callingCode = digits.slice(0, i);
    rest = digits.slice(i);
    const main = meta.getCountryCodesForCallingCode(callingCode)?.[0];
    if (main === undefined) return undefined;
    prefixPlan = planOf(main);
  } else {
    const regionPlan = region === undefined ? undefined : regionPlanOf(region);
    if (regionPlan === undefined) return undefined;
    prefixPlan = regionPlan;
    // An IDD prefix or the calling code without "+": the library re-reads the number as international.
    if (digits.search(prefixPlan.idd) === 0 || digits.startsWith(prefixPlan.callingCode)) return undefined;
    callingCode = prefixPlan.callingCode;
    rest = digits;
    country = region;
  }
  const countries = meta.getCountryCodesForCallingCode(callingCode);
  // A national prefix or carrier code the library would strip (or transform), under conditions of its own.
  if (rest === '' || countries === undefined || prefixPlan.nationalPrefix?.test(rest)) return undefined;
  // getCountryByCallingCode: the only country, else the first whose leading digits (or, without them, number types) match.
  let exact: string | undefined;
  // A country chosen by its number types is one the number is valid in (the check isValid() repeats).
  let typed = false;
  if (countries.length === 1) exact = countries[0];
  else {
    for (const c of countries) {
      const p = planOf(c);
      if (p.leadingDigits ? rest.search(p.leadingDigits) === 0 : (typed = hasType(p, rest))) {
        exact = c;
        break;
      }
    }
  }
  if (exact !== undefined) country = exact;
  if (rest.length < MIN_NSN || rest.length > MAX_NSN) return null;
  if (typed) return `+${callingCode}${rest}`;
  const plan = planOf(country ?? countries[0]!);
  const valid = plan.hasTypes ? hasType(plan, rest) : plan.nationalNumber.test(rest);
  return valid ? `+${callingCode}${rest}` : null;
}
