/** Just enough DN handling to compare DNs and find parents: RDNs split on unescaped commas, case and spaces folded. */

/** The RDNs of a DN, normalised for comparison (lower-case, spaces around "=" and "," removed). */
export function dnParts(dn: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i]!;
    if (c === '\\') {
      cur += c + (dn[i + 1] ?? '');
      i++;
    } else if (c === ',' || c === ';') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((r) => r.trim().toLowerCase().replace(/\s*=\s*/, '=')).filter((r) => r !== '');
}

/** A normalised DN key. */
export function dnKey(dn: string): string {
  return dnParts(dn).join(',');
}
