/**
 * The read-only commands' snapshot of the state DB (src/mirror/snapshot.ts): a private copy in TMPDIR, removed when
 * closed. A process that reads many (in-process runs, a daemon's reads) must not collect an exit listener per read:
 * Node prints MaxListenersExceededWarning at the eleventh (issue 42 point 4).
 */
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/mirror/db.js';
import { openStateSnapshot } from '../../src/mirror/snapshot.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { tempDir } from '../helpers/temp.js';

const snapshotDirs = (): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith('orgsync-snapshot-'));

describe('state DB snapshots', () => {
  // A TMPDIR of this file's own: the suite's is shared with files that run read-only commands at the same time.
  const suiteTmp = process.env.TMPDIR;
  beforeEach(() => {
    process.env.TMPDIR = tempDir();
  });
  afterEach(() => {
    if (suiteTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = suiteTmp;
  });

  it('twenty snapshots opened and closed leave no exit listener and no copy behind', () => {
    const path = join(tempDir(), 'state.db');
    openStateDb(path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }).close();
    const listeners = process.listenerCount('exit');
    const before = snapshotDirs();
    for (let i = 0; i < 20; i += 1) {
      const snapshot = openStateSnapshot(path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
      expect(snapshotDirs().length).toBe(before.length + 1);
      snapshot.close();
    }
    expect(process.listenerCount('exit')).toBe(listeners);
    expect(snapshotDirs()).toEqual(before);
  });

  it('an open snapshot is removed at exit should nobody close it', () => {
    const path = join(tempDir(), 'state.db');
    openStateDb(path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }).close();
    const listeners = process.listenerCount('exit');
    const before = snapshotDirs();
    const snapshot = openStateSnapshot(path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    expect(process.listenerCount('exit')).toBe(listeners + 1);
    const added = process.listeners('exit').at(-1) as () => void;
    const [dir] = snapshotDirs().filter((n) => !before.includes(n));
    expect(dir).toBeDefined();
    snapshot.db.close();
    added(); // what the exit listener does
    expect(existsSync(join(tmpdir(), dir!))).toBe(false);
    snapshot.close(); // and closing after it is harmless
    expect(process.listenerCount('exit')).toBe(listeners);
  });
});
