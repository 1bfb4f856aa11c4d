/**
 * Issue 31: a large run collects its garbage between stages (src/daemon/pipeline/collect.ts). What it must do: run
 * only from COLLECT_FROM_RECORDS records, report the heap it measured at debug level, and print no Node warning
 * (vm.measureMemory is experimental, which says nothing to an operator).
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { COLLECT_FROM_RECORDS, collectEvery, collectInterval, collectStage } from '../../src/daemon/pipeline/collect.js';
import { createLogger } from '../../src/observability/logger.js';

function debugLog(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination, pretty: false, secrets: [], redactPaths: [] });
  return { logger, lines: () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('collectStage', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  afterEach(() => {
    warnings.length = 0;
  });

  it('leaves a small run alone: no collection, nothing logged', async () => {
    const { logger, lines } = debugLog();
    await collectStage('sources', COLLECT_FROM_RECORDS - 1, logger);
    expect(lines()).toEqual([]);
  });

  it('collects after a stage of a large run and logs the heap it measured, without a Node warning', async () => {
    const { logger, lines } = debugLog();
    await collectStage('plan', COLLECT_FROM_RECORDS, logger);
    await collectStage('sources', 1_000_000, logger);
    const logged = lines();
    expect(logged.map((l) => [l.msg, l.stage, l.records])).toEqual([
      ['heap collected between stages', 'plan', COLLECT_FROM_RECORDS],
      ['heap collected between stages', 'sources', 1_000_000],
    ]);
    for (const l of logged) expect(l.heap_mb).toBeGreaterThan(0);
    // The warning would be emitted on the next tick: give it one.
    await new Promise((r) => setImmediate(r));
    expect(warnings.map((w) => w.name)).toEqual([]);
    process.off('warning', onWarning);
  });
});

describe('collectEvery', () => {
  it('collects after every COLLECT_FROM_RECORDS finished changes of a long apply, and not before', async () => {
    const { logger, lines } = debugLog();
    const tick = collectEvery(logger);
    for (let i = 1; i < COLLECT_FROM_RECORDS; i++) tick();
    await new Promise((r) => setTimeout(r, 20));
    expect(lines()).toEqual([]);
    tick();
    for (let i = 0; i < 50 && lines().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(lines().map((l) => [l.msg, l.stage, l.finished])).toEqual([['heap collected during the apply', 'apply', COLLECT_FROM_RECORDS]]);
  });

  it('collects every `every` changes when given: the interval is a twentieth of the apply, from 5,000 to COLLECT_FROM_RECORDS', async () => {
    expect([collectInterval(50_000), collectInterval(100_000), collectInterval(105_500), collectInterval(400_000), collectInterval(1_000_000), collectInterval(3_000_000)]).toEqual([5_000, 5_000, 5_275, 20_000, COLLECT_FROM_RECORDS, COLLECT_FROM_RECORDS]);
    const { logger, lines } = debugLog();
    const tick = collectEvery(logger, 5_000);
    for (let i = 1; i < 5_000; i++) tick();
    await new Promise((r) => setTimeout(r, 20));
    expect(lines()).toEqual([]);
    for (let i = 0; i <= 5_000; i++) tick();
    for (let i = 0; i < 50 && lines().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(lines().map((l) => [l.msg, l.finished])).toEqual([
      ['heap collected during the apply', 5_000],
      ['heap collected during the apply', 10_000],
    ]);
  });
});
