import { describe, expect, it } from 'vitest';
import { runTasks, type Task } from '../../src/applier/executor.js';

const t = (id: string, ...dependsOn: string[]): Task => ({ id, dependsOn });

/** A task runner that notes each task as it starts and succeeds on the next turn of the event loop. */
const noting =
  (started: string[]) =>
  async (task: Task): Promise<boolean> => {
    started.push(task.id);
    await new Promise((r) => setImmediate(r));
    return true;
  };

describe('runTasks', () => {
  it('runs a task only after what it depends on, and never more than `concurrency` at once', async () => {
    const started: string[] = [];
    let inFlight = 0;
    let peak = 0;
    const tasks = [t('a'), t('b'), t('c', 'a'), t('d', 'c', 'b'), t('e'), t('f'), t('g')];
    const status = await runTasks(tasks, {
      concurrency: 2,
      run: async (task) => {
        started.push(task.id);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight -= 1;
        return true;
      },
    });
    expect(peak).toBe(2);
    expect(started.indexOf('c')).toBeGreaterThan(started.indexOf('a'));
    expect(started.indexOf('d')).toBeGreaterThan(Math.max(started.indexOf('b'), started.indexOf('c')));
    expect([...status.values()].every((s) => s === 'ok')).toBe(true);
  });

  it('skips only what depends on a failed task (partial apply by dependency)', async () => {
    const skipped: string[] = [];
    const status = await runTasks([t('a'), t('b', 'a'), t('c', 'b'), t('x'), t('y', 'x')], {
      concurrency: 4,
      run: async (task) => task.id !== 'a',
      onSkip: (task, cause) => skipped.push(`${task.id}<-${cause}`),
    });
    expect(Object.fromEntries(status)).toEqual({ a: 'failed', b: 'skipped', c: 'skipped', x: 'ok', y: 'ok' });
    expect(skipped).toEqual(['b<-a', 'c<-a']);
  });

  it('starts nothing new once stopped, lets those in flight finish, and marks the rest not started', async () => {
    const stop = new AbortController();
    const status = await runTasks([t('a'), t('b'), t('c'), t('d')], {
      concurrency: 1,
      signal: stop.signal,
      run: async (task) => {
        if (task.id === 'b') stop.abort();
        await new Promise((r) => setImmediate(r));
        return true;
      },
    });
    expect(Object.fromEntries(status)).toEqual({ a: 'ok', b: 'ok', c: 'not_started', d: 'not_started' });
  });

  it('stops starting tasks after maxFailures', async () => {
    const status = await runTasks([t('a'), t('b'), t('c')], { concurrency: 1, maxFailures: 2, run: async () => false });
    expect(Object.fromEntries(status)).toEqual({ a: 'failed', b: 'failed', c: 'not_started' });
  });

  it('treats a throwing task as failed', async () => {
    const status = await runTasks([t('a'), t('b', 'a')], {
      concurrency: 1,
      run: async () => {
        throw new Error('boom');
      },
    });
    expect(Object.fromEntries(status)).toEqual({ a: 'failed', b: 'skipped' });
  });

  it('starts ready tasks in plan order: a task unlocked later goes before later-placed ready ones', async () => {
    const started: string[] = [];
    // d (position 3) waits for a; once a succeeds it is ready beside e and f, and goes first.
    const tasks = [t('a'), t('b'), t('c'), t('d', 'a'), t('e'), t('f', 'missing-elsewhere')];
    const status = await runTasks(tasks, {
      concurrency: 1,
      run: noting(started),
    });
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(status.get('f')).toBe('ok');
  });

  it('waits for every prerequisite, named twice or shared by many, and reports the dependents of a failure in plan order', async () => {
    const started: string[] = [];
    const tasks = [t('dep'), t('pos'), t('m1', 'dep', 'pos'), t('m2', 'dep', 'dep'), t('m3', 'pos'), t('m4', 'm1', 'dep')];
    const ok = await runTasks(tasks, {
      concurrency: 3,
      run: noting(started),
    });
    expect([...ok.values()].every((s) => s === 'ok')).toBe(true);
    expect(started.indexOf('m1')).toBeGreaterThan(Math.max(started.indexOf('dep'), started.indexOf('pos')));
    expect(started.indexOf('m2')).toBeGreaterThan(started.indexOf('dep'));
    expect(started.indexOf('m4')).toBeGreaterThan(started.indexOf('m1'));
    const skipped: string[] = [];
    const failed = await runTasks(tasks, { concurrency: 1, run: async (task) => task.id !== 'dep', onSkip: (task, cause, i) => skipped.push(`${i}:${task.id}<-${cause}`) });
    expect(Object.fromEntries(failed)).toEqual({ dep: 'failed', pos: 'ok', m1: 'skipped', m2: 'skipped', m3: 'ok', m4: 'skipped' });
    expect(skipped).toEqual(['2:m1<-dep', '5:m4<-dep', '3:m2<-dep']);
  });
});
