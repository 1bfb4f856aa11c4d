/** Normalisation applied to both sides before comparing, so that only real differences become writes. */

/** Text fields: Unicode NFC, trimmed. */
export function normText(v: string | undefined | null): string {
  return (v ?? '').normalize('NFC').trim();
}

/** E-mail: trimmed, lower-cased. */
export function normEmail(v: string | undefined | null): string {
  return (v ?? '').trim().toLowerCase();
}

/** Phone: digits and a leading +, without spaces, dashes, dots or brackets. */
export function normPhone(v: string | undefined | null): string {
  return (v ?? '').replace(/[\s\-().]/g, '');
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
