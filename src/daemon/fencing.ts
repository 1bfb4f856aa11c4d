/**
 * Fencing: the lease as a write gate of the applier. A writer that no longer holds its term of the state DB's lease
 * (frozen past the TTL, another process took over) starts no further write and abandons its plan.
 */
import type { StopReason, WriteGate } from '../applier/index.js';
import type { MirrorLease } from '../mirror/lease.js';

/** The stop kind of a lost lease (logs, metrics). */
export const LEASE_LOST = 'lease_lost';

/** The message of a lost lease, before the run's `: stopped after N writes`. */
export function leaseLostMessage(holder: string, at: number): string {
  return `lease lost to ${holder} at ${new Date(at).toISOString()}`;
}

/** A gate that refuses every write once `lease` is no longer this process's (checked before each write attempt). */
export function leaseGate(lease: Pick<MirrorLease, 'verify'>): WriteGate {
  return {
    name: 'lease',
    check(): StopReason | undefined {
      const loss = lease.verify();
      return loss ? { kind: LEASE_LOST, message: leaseLostMessage(loss.holder, loss.at) } : undefined;
    },
  };
}
