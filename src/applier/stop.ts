/**
 * The one way an apply stops starting writes. Every stop condition (a shutdown signal, a lost lease, a write whose
 * result cannot be recorded, a scope the platform denies) is either a `WriteGate` checked right before every write
 * attempt (retries included) or a direct `stop()`; the first reason wins, and from then on:
 * - the executor starts no further change,
 * - a write about to be sent is refused (`WriteRefused`, its change counted `not_started`),
 * - a retry waiting out its backoff gives up at once,
 * while requests already on the wire finish (or are aborted by the caller's separate abort signal).
 */

/** Why an apply stopped starting writes. */
export interface StopReason {
  /** A bounded name (logs, metrics): `shutdown`, `lease_lost`, `state_unrecordable`, `scope_denied`. */
  kind: string;
  /** One line for the operator, without the count of writes (the run appends `: stopped after N writes`). */
  message: string;
}

/** A check run right before every write attempt the applier starts. */
export interface WriteGate {
  /** Names the gate in logs. */
  name: string;
  /** undefined to go on; a reason to start no further write. Must be cheap: it runs once per write. */
  check(): StopReason | undefined;
}

/** Thrown instead of sending a write once the apply has stopped. */
export class WriteRefused extends Error {
  constructor(readonly reason: StopReason) {
    super(`not started: ${reason.message}`);
    this.name = 'WriteRefused';
  }
}

/** True for a WriteRefused (also across module copies). */
export function isWriteRefused(err: unknown): err is WriteRefused {
  return err instanceof WriteRefused || (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'WriteRefused');
}

/** The stop state of one apply. */
export class ApplyStop {
  private why: StopReason | undefined;
  private readonly controller = new AbortController();

  constructor(private readonly gates: readonly WriteGate[] = []) {}

  /** Why the apply stopped, once it did. */
  get reason(): StopReason | undefined {
    return this.why;
  }

  /** Aborted once stopped: the executor starts nothing new and retries waiting for their turn give up. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the apply (the first reason wins). */
  stop(reason: StopReason): void {
    if (this.why) return;
    this.why = reason;
    this.controller.abort(new WriteRefused(reason));
  }

  /** Runs every gate (unless stopped already); the first that refuses stops the apply. Returns the stop reason, if any. */
  checkGates(): StopReason | undefined {
    if (!this.why) {
      for (const gate of this.gates) {
        const r = gate.check();
        if (r) {
          this.stop(r);
          break;
        }
      }
    }
    return this.why;
  }

  /** Runs every gate; throws WriteRefused when the apply is (or now becomes) stopped. Called before each write attempt. */
  assertMayWrite(): void {
    const why = this.checkGates();
    if (why) throw new WriteRefused(why);
  }
}
