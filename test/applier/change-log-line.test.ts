/**
 * The applier's line per change (logChangeResult): a dry run says it would apply and never that a change was
 * applied; a real run says `change applied`. Through applyChanges against the emulator, and the function alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyChanges, logChangeResult, type ChangeResult } from '../../src/applier/index.js';
import type { Change } from '../../src/domain/index.js';
import type { Logger } from '../../src/shared/logger.js';
import { systemClock } from '../../src/shared/clock.js';
import { SyncWorld } from '../e2e/harness.js';

interface Line {
  level: string;
  msg: string | undefined;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line. */
function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (fields: object, msg?: string) => lines.push({ level, msg, fields: fields as Record<string, unknown> });
  const logger: Logger = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines };
}

const createDept = (id: string, name: string): Change => ({
  id: `departments:create:${id}`,
  entity: 'departments',
  op: 'create',
  thirdId: id,
  description: `create department "${name}"`,
  reason: 'missing on the platform',
  fields: { name, third_department_id: id },
  request: { method: 'POST', path: '/org/departments', body: { name, third_department_id: id, parent_id: '' } },
  dependsOn: [],
});

let world: SyncWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('the line logged per change', () => {
  it('a dry run logs status dry_run and "would apply", never "applied"; a real run logs "change applied"', async () => {
    world = await SyncWorld.start();
    const w = world;
    const { logger, lines } = capture();
    const deps = { client: w.client, mirror: w.mirror, ownership: w.ownership, logger, clock: systemClock, syncId: 'hr-sync', adopt: w.config.sync.adopt, refresh: async () => undefined };
    const dry = await applyChanges([createDept('eng', 'Engineering')], deps, { dryRun: true, concurrency: 8, maxFailures: 100 });
    expect(dry.byStatus.applied).toBe(1);
    expect(lines).toEqual([{ level: 'info', msg: 'would apply', fields: expect.objectContaining({ change: 'departments:create:eng', status: 'dry_run', dry_run: true }) }]);
    expect(await w.writeCalls()).toBe(0);

    lines.length = 0;
    await applyChanges([createDept('eng', 'Engineering')], deps, { concurrency: 8, maxFailures: 100 });
    expect(lines).toEqual([{ level: 'info', msg: 'change applied', fields: expect.objectContaining({ change: 'departments:create:eng', status: 'applied', dry_run: false }) }]);
    expect(await w.writeCalls()).toBe(1);
  });

  it('logs failures as not applied and leaves skipped changes to the summary', () => {
    const { logger, lines } = capture();
    const change = createDept('eng', 'Engineering');
    logChangeResult(logger, { change, status: 'failed', message: 'boom' } satisfies ChangeResult, false);
    logChangeResult(logger, { change, status: 'skipped', message: 'depends on x' } satisfies ChangeResult, false);
    expect(lines).toEqual([{ level: 'warn', msg: 'change not applied', fields: expect.objectContaining({ status: 'failed', error: 'boom' }) }]);
  });
});
