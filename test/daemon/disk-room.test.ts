/**
 * Issue 42 point 3: the room a plan needs in the state DB's filesystem against what is free (the stage that warns;
 * test/faults/disk-full.test.ts sees the warning of a real run on a small tmpfs).
 */
import { describe, expect, it } from 'vitest';
import { BYTES_PER_CHANGE, BYTES_PER_CREATE, diskRoomStage, diskShortfall, DISK_ROOM_MESSAGE, WAL_HEADROOM } from '../../src/daemon/pipeline/disk-room.js';
import type { Change } from '../../src/domain/index.js';

const change = (op: Change['op'], i: number): Change => ({ id: `members:${op}:u${i}`, entity: 'members', op, thirdId: `u${i}`, description: '', reason: '', fields: {}, dependsOn: [] });
const plan = (creates: number, others: number) => ({ changes: [...Array.from({ length: creates }, (_, i) => change('create', i)), ...Array.from({ length: others }, (_, i) => change('update', i))] });

describe('the disk room of a plan', () => {
  it('a million creates need about a gigabyte and the WAL room; 1% of updates a few MB', () => {
    expect(diskShortfall(plan(0, 0), '/s/state.db', 0)).toEqual({ state_db: '/s/state.db', free_mb: 0, needed_mb: WAL_HEADROOM / 1048576, creates: 0, other_changes: 0 });
    const big = diskShortfall(plan(1_000_000, 0), '/s/state.db', 100);
    expect(big?.needed_mb).toBe(Math.ceil((1_000_000 * BYTES_PER_CREATE + WAL_HEADROOM) / 1048576));
    expect(diskShortfall(plan(0, 10_000), '/s/state.db', 100)).toBeUndefined();
    expect(diskShortfall(plan(0, 10_000), '/s/state.db', 10)?.needed_mb).toBe(Math.ceil((10_000 * BYTES_PER_CHANGE + WAL_HEADROOM) / 1048576));
  });

  it('enough room, or a filesystem that cannot be read: nothing said', () => {
    expect(diskShortfall(plan(100, 100), '/s/state.db', 1_000)).toBeUndefined();
    expect(diskShortfall(plan(100, 100), '/s/state.db', undefined)).toBeUndefined();
  });

  it('warns once with the figures as fields, never for an in-memory state DB', () => {
    const lines: [Record<string, unknown>, string][] = [];
    const logger = { warn: (o: Record<string, unknown>, m: string) => lines.push([o, m]) } as never;
    diskRoomStage(plan(2_000, 0), '/s/state.db', logger, () => 3);
    diskRoomStage(plan(2_000, 0), ':memory:', logger, () => 0);
    expect(lines).toEqual([[{ state_db: '/s/state.db', free_mb: 3, needed_mb: 10, creates: 2_000, other_changes: 0 }, DISK_ROOM_MESSAGE]]);
  });
});
