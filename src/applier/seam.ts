/**
 * The one dry-run seam (ldap2pg's `really`): every write of a run, to the platform or to the state DB, goes through a
 * port that has a real and a no-op implementation, and this is the one place that picks one, once per run. Nothing
 * else branches on dry run to decide whether to write.
 */

/** The real implementation of a port, or (a dry run) its implementation that writes nothing. */
export function throughSeam<T>(dryRun: boolean, real: () => T, dry: () => T): T {
  return dryRun ? dry() : real();
}
