/**
 * Harness of the trust tests: the reconcile's SyncWorld (real emulator on loopback, real client, state DB file) with
 * runOnce wired to the trust state, and a clock whose `now` the test sets (sleeps stay real, so pacing still works).
 */
import { runOnce, type RunOnceOptions, type RunSummary } from '../../src/daemon/run-once.js';
import { createRunTrust } from '../../src/daemon/trust.js';
import { TrustStateStore } from '../../src/mirror/trust-state.js';
import { systemClock, type Clock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { desiredOf, SyncWorld, type OrgState } from '../e2e/harness.js';

/** A clock whose `now` only moves when the test says so. */
export class SettableClock implements Clock {
  constructor(public t = Date.parse('2026-11-22T12:00:00.000Z')) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
  /** Moves `now` forward. */
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A SyncWorld whose runs go through the trust features. */
export class TrustWorld {
  readonly clock = new SettableClock();
  constructor(readonly world: SyncWorld) {}

  static async start(syncYaml: string): Promise<TrustWorld> {
    return new TrustWorld(await SyncWorld.start(syncYaml));
  }

  get trustStore(): TrustStateStore {
    return new TrustStateStore(this.world.db, this.world.config.sync.id);
  }

  run(desired: OrgState, options: Partial<RunOnceOptions> = {}): Promise<RunSummary> {
    const w = this.world;
    return runOnce(
      {
        config: w.config,
        client: w.client,
        mirror: w.mirror,
        ownership: w.ownership,
        logger: silentLogger,
        clock: this.clock,
        readDesiredState: async () => desiredOf(structuredClone(desired)),
        trust: createRunTrust(this.trustStore, w.config),
      },
      { mode: 'apply', ...options },
    );
  }

  close(): Promise<void> {
    return this.world.close();
  }
}
