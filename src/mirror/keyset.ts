/**
 * Keyset paging of an ordered query, the way the state DB is read wherever a table may hold a tenant: `page(after,
 * limit)` returns up to `limit` rows whose key is past `after`, in key order. A reader holds one page, not the
 * table, and no statement stays open between pages (a write between two is seen or not, never repeated).
 */
export function* keysetPages<R, K>(page: (after: K, limit: number) => R[], keyOf: (row: R) => K, start: K, limit: number): Generator<R[]> {
  for (let after = start; ; ) {
    const rows = page(after, limit);
    if (rows.length > 0) yield rows;
    if (rows.length < limit) return;
    after = keyOf(rows[rows.length - 1]!);
  }
}
