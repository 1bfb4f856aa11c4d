/**
 * The emulator's one error of its own: a seed that does not read, parse or validate. One line naming the file (or
 * `seed`), the place and the field. `code` and `exitCode` let a command-line host map it without importing this class
 * (orgsync's `emulator` command reports it as SEED_INVALID, exit 2).
 */
export class SeedError extends Error {
  override readonly name = 'SeedError';
  readonly code = 'SEED_INVALID';
  /** The exit code a command line should end with: 2, a usage or input error. */
  readonly exitCode = 2;

  constructor(message: string) {
    super(message);
  }
}

/** True for a SeedError, also one from another copy of this package. */
export function isSeedError(err: unknown): err is SeedError {
  return err instanceof SeedError || (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'SeedError');
}
