/**
 * Normalisation applied to both sides before comparing, so that only real differences become writes (the planner's
 * rows, and the state DB's member table when it looks a contact up).
 * Each returns the very string it was given when that is already normal: a plan's fields then share their strings with
 * the desired state instead of holding a copy of every name and e-mail.
 */

/** `out` when it differs from `v`, else `v` itself. */
const same = (v: string, out: string): string => (out === v ? v : out);

/** Text fields: Unicode NFC, trimmed. */
export function normText(v: string | undefined | null): string {
  return same(v ?? '', (v ?? '').normalize('NFC').trim());
}

/** E-mail: trimmed, lower-cased. */
export function normEmail(v: string | undefined | null): string {
  return same(v ?? '', (v ?? '').trim().toLowerCase());
}

/** Phone: digits and a leading +, without spaces, dashes, dots or brackets. */
export function normPhone(v: string | undefined | null): string {
  return same(v ?? '', (v ?? '').replace(/[\s\-().]/g, ''));
}

/** The contact noted with a pending member create: its normalised e-mail and phone. */
export function pendingContact(email: string | undefined, phone: string | undefined): string {
  return `${normEmail(email)}\u0000${normPhone(phone)}`;
}

/** True when a member's e-mail or phone is the one noted with a pending create (a crashed create of this sync). */
export function matchesPendingContact(contact: string, email: string, phone: string): boolean {
  const [e = '', p = ''] = contact.split('\u0000');
  return (e !== '' && e === normEmail(email)) || (p !== '' && p === normPhone(phone));
}
