/**
 * The heap-room check (src/daemon/pipeline/heap-room.ts): a warning naming NODE_OPTIONS before V8's fatal "heap out
 * of memory", figured from the records a run read. The limits are given, as Node derives them in a 640Mi container
 * (a 332 MB heap) and with the chart's setting (480).
 */
import { describe, expect, it } from 'vitest';
import { HEAP_ROOM_MESSAGE, heapRoomStage, heapShortfall } from '../../src/daemon/pipeline/heap-room.js';
import { memberList } from '../../src/domain/index.js';
import type { Logger } from '../../src/shared/logger.js';

const MiB = 1048576;
const records = 1_005_500; // a million members, 5,000 departments, 500 positions
/** A desired state of `members` members, 5,000 departments and 500 positions: sparse lists, only their lengths are read. */
const desiredOf = (members: number): Parameters<typeof heapRoomStage>[0] => ({ members: memberList(new Array(members)), departments: new Array(5_000), positions: new Array(500) });

function noting(): { logger: Logger; lines: { level: string; fields: object; msg?: string }[] } {
  const lines: { level: string; fields: object; msg?: string }[] = [];
  const at = (level: string) => (fields: object, msg?: string) => void lines.push({ level, fields, msg });
  const logger: Logger = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines };
}

describe('heapShortfall', () => {
  it('finds a million members short of room under the 332 MB Node gives a 640Mi container, and suggests three quarters of it', () => {
    expect(heapShortfall(records, 332 * MiB, 640 * MiB)).toEqual({ records, heap_limit_mb: 332, needed_mb: 386, memory_mb: 640, suggested_max_old_space_size: 480 });
  });

  it('finds room with the chart\'s 480, for 100,000 members under a 512Mi container\'s default, and on a large machine', () => {
    expect(heapShortfall(records, 480 * MiB, 640 * MiB)).toBeUndefined();
    expect(heapShortfall(105_500, 256 * MiB, 512 * MiB)).toBeUndefined();
    expect(heapShortfall(records, 4144 * MiB, 23 * 1024 * MiB)).toBeUndefined();
  });

  it('suggests the need and a quarter where the memory allows more (a heap flag set too low on a large machine)', () => {
    expect(heapShortfall(105_500, 63 * MiB, 24_105 * MiB)).toEqual({ records: 105_500, heap_limit_mb: 63, needed_mb: 85, memory_mb: 24_105, suggested_max_old_space_size: 107 });
  });

  it('suggests three quarters of the memory when even that is short, and the message says to raise the limit then', () => {
    expect(heapShortfall(2_000_000, 256 * MiB, 512 * MiB)).toEqual({ records: 2_000_000, heap_limit_mb: 256, needed_mb: 718, memory_mb: 512, suggested_max_old_space_size: 384 });
    expect(HEAP_ROOM_MESSAGE).toContain('raise the memory limit too if that is below needed_mb');
  });
});

describe('heapRoomStage', () => {
  it('warns once, with the figures as fields and a message naming the setting', () => {
    const { logger, lines } = noting();
    heapRoomStage(desiredOf(1_000_000), 0, logger, { heap: 332 * MiB, memory: 640 * MiB });
    expect(lines).toEqual([{ level: 'warn', fields: { records, heap_limit_mb: 332, needed_mb: 386, memory_mb: 640, suggested_max_old_space_size: 480 }, msg: HEAP_ROOM_MESSAGE }]);
    expect(HEAP_ROOM_MESSAGE).toBe(
      'the heap limit is below what this run needs, so it may stop with "JavaScript heap out of memory": Node sets the limit to half the memory the process may use (in a container, half its memory limit); set NODE_OPTIONS=--max-old-space-size=<suggested_max_old_space_size> (the chart\'s nodeHeapPercent does), and raise the memory limit too if that is below needed_mb',
    );
  });

  it('says nothing when the heap has room (this process: its own limits)', () => {
    const { logger, lines } = noting();
    heapRoomStage(desiredOf(1_000_000), 0, logger, { heap: 480 * MiB, memory: 640 * MiB });
    heapRoomStage(desiredOf(1_000), 0, logger);
    expect(lines).toEqual([]);
  });

  it('counts the members it does not own yet: a daily run of a million owned members under 332 MB says nothing, one with 900,000 new warns for them (issue 42)', () => {
    const { logger, lines } = noting();
    heapRoomStage(desiredOf(1_000_000), 1_000_000, logger, { heap: 332 * MiB, memory: 640 * MiB });
    heapRoomStage(desiredOf(1_000_000), 990_000, logger, { heap: 332 * MiB, memory: 640 * MiB });
    expect(lines).toEqual([]);
    heapRoomStage(desiredOf(1_000_000), 100_000, logger, { heap: 280 * MiB, memory: 640 * MiB });
    expect(lines.map((l) => (l.fields as { records: number }).records)).toEqual([905_500]);
  });
});
