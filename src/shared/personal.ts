/**
 * Contact values found in free text (issue 44): a last line of defence for text that leaves the process where no
 * personal data belongs (JSON log lines without `log.personal_data`, the run history behind /status). Messages are
 * written without names, e-mails or phones in the first place; this catches an e-mail or phone number that reached
 * one anyway (a platform's or a source's error text quoting a value).
 */

const EMAIL_IN_TEXT = /[^\s"'<>()@,;:\\[\]]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const PHONE_IN_TEXT = /\+\d{7,15}\b/g;

/** Masks an e-mail (first character and domain kept) or a phone number (first 3 and last 2 characters kept). */
export function maskContactValue(value: string): string {
  if (value === '') return '';
  const at = value.lastIndexOf('@');
  if (at > 0) return `${value[0]}***${value.slice(at)}`;
  if (value.length <= 5) return '*'.repeat(value.length);
  return `${value.slice(0, 3)}${'*'.repeat(value.length - 5)}${value.slice(-2)}`;
}

/** `text` with every e-mail address and E.164 phone number masked (`a***@example.com`, `+49******78`). */
export function maskContactsInText(text: string): string {
  let out = text;
  if (out.includes('@')) out = out.replace(EMAIL_IN_TEXT, maskContactValue);
  if (out.includes('+')) out = out.replace(PHONE_IN_TEXT, maskContactValue);
  return out;
}

/** A JSON-able value with every string in it passed through maskContactsInText (a copy). */
export function maskContactsInValue<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskContactsInText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !(v instanceof Date)) return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
