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
