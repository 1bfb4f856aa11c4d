/**
 * Issue 31 point 2: saved plans read change by change (`approvals show`, `apply FILE`). The streamed reader must accept
 * and refuse exactly what parseSavedPlanChunks does (same messages), hand over the same changes whatever the chunk
 * boundaries, and the reports made from what it keeps must be the reports of the whole plan.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChangeCompactor, SavedChangeLoader, sameJson } from '../../src/daemon/compact-changes.js';
import { buildSavedPlan, parseSavedPlanChunks, savedPlanChunks, type SavedPlanFile } from '../../src/daemon/saved-plan.js';
import { streamSavedPlan } from '../../src/daemon/saved-plan-stream.js';
import type { Change, Plan } from '../../src/domain/index.js';
import { CHANGE_OPS, countChanges, memberCreateChange, PLAN_FORMAT_VERSION } from '../../src/domain/index.js';
import { planJsonChunks, planTextLines } from '../../src/planner/render.js';
import { GatheredChanges } from '../../src/planner/report/gathered.js';
import { planHtmlChunks, reportHtmlChunks } from '../../src/planner/report/html.js';
import { canonicalJson, jsonChunks } from '../../src/shared/json-chunks.js';
import { jsonArrayElements } from '../../src/shared/json-stream-reader.js';

const KEY = createHash('sha256').update('saved-plan-stream test key').digest();
const SYNC = 'stream';

/** A seeded generator (mulberry32): the same plans every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A change of each kind the planner makes, with unicode, escapes, PlanRefs, before values and paths. */
function changeAt(i: number, rnd: () => number): Change {
  const id = `E${String(i).padStart(6, '0')}`;
  const kind = Math.floor(rnd() * 6);
  const dept = `departments:create:D${Math.floor(rnd() * 7)}`;
  if (kind === 0) return { id: `departments:create:D${i}`, entity: 'departments', op: 'create', thirdId: `D${i}`, description: `create department "Dépt ${i}"`, reason: 'missing on the platform', fields: { name: `Dépt ${i}`, parent_id: '' }, request: { method: 'POST', path: '/org/departments', body: { name: `Dépt ${i}`, parent_id: '' } }, dependsOn: [] };
  if (kind === 1) return { id: `positions:update:P${i}`, entity: 'positions', op: 'update', thirdId: `P${i}`, platformId: `pos-${i}`, description: `rename position ${i}`, reason: 'name differs', fields: { name: `Lead ☃ ${i}` }, before: { name: `Lead ${i}` }, request: { method: 'PATCH', path: `/org/positions/pos-${i}`, body: { name: `Lead ☃ ${i}` } }, dependsOn: [] };
  if (kind === 2) return { id: `members:remove:${id}`, entity: 'members', op: 'remove', thirdId: id, platformId: `acc-${i}`, description: `remove member ${id}`, reason: 'gone from the source', fields: {}, request: { method: 'DELETE', path: `/org/members/acc-${i}` }, dependsOn: [] };
  if (kind === 3) return { id: `members:update:${id}`, entity: 'members', op: 'update', thirdId: id, platformId: `acc-${i}`, description: `suspend member ${id}`, reason: 'status differs', fields: { status: 'suspended' }, before: { status: 'active' }, request: { method: 'PATCH', path: `/org/members/acc-${i}`, body: { status: 'suspended' } }, dependsOn: [] };
  const fields = { display_name: `Person ${i} "q" \\ Ünïcode`, third_user_id: id, email: `p${i}@acme.test`, title: ['Engineer', 'Lead', 'Manager'][i % 3]!, department_id: { ref: dept } };
  return {
    id: `members:create:${id}`,
    entity: 'members',
    op: 'create',
    thirdId: id,
    description: `create member "Person ${i}" in "/Acme/D${i % 7}"`,
    paths: { department_id: { after: `/Acme/D${i % 7}` } },
    reason: 'missing on the platform',
    fields,
    request: { method: 'POST', path: '/org/members', body: kind === 4 ? { ...fields } : { ...fields, extra: 1 } },
    dependsOn: [dept],
  };
}

function planOf(n: number, seed: number): Plan {
  const rnd = random(seed);
  const changes = Array.from({ length: n }, (_, i) => changeAt(i, rnd));
  const warnings = [{ code: 'unpatchable_drift', entity: 'members', thirdId: 'E000001', message: 'phone differs' }] as Plan['warnings'];
  return { formatVersion: PLAN_FORMAT_VERSION, syncId: SYNC, policy: 'sync', createdAt: '2026-11-27T12:00:00.000Z', changes, warnings, withheld: [], counts: countChanges(changes) };
}

const savedOf = (plan: Plan): SavedPlanFile => buildSavedPlan(plan, { mirrorHash: 'sha256:m', sourceHash: 'sha256:s' }, KEY);

/** The text of `saved` cut into pieces of random sizes (some of one byte), as Buffers. */
function cut(text: string, seed: number): Buffer[] {
  const rnd = random(seed);
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = rnd() < 0.2 ? 1 : 1 + Math.floor(rnd() * 700);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

const textOf = (saved: SavedPlanFile): string => [...savedPlanChunks(saved)].join('');

/** What streamSavedPlan hands over and returns, or the message it refuses with. */
function streamed(text: string, seed: number) {
  const changes: Change[] = [];
  let restarts = 0;
  const sink = { each: (c: Change) => changes.push(c), restart: () => ((changes.length = 0), restarts++) };
  try {
    const { saved, changeCount } = streamSavedPlan(() => cut(text, seed), 'plan.json', SYNC, KEY, sink);
    return { saved, changeCount, changes, restarts };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** What parseSavedPlanChunks returns, or the message it refuses with. */
function parsed(text: string): { saved: SavedPlanFile } | { error: string } {
  try {
    return { saved: parseSavedPlanChunks([text], 'plan.json', SYNC, KEY) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('streamSavedPlan', () => {
  it('hands over every change in order and returns the checked document, whatever the chunk boundaries', () => {
    for (const seed of [1, 2, 3]) {
      const saved = savedOf(planOf(400 + seed * 37, seed));
      const text = textOf(saved);
      const got = streamed(text, seed);
      const whole = JSON.parse(text) as SavedPlanFile;
      expect(got.error).toBeUndefined();
      expect(got.changes).toEqual(whole.plan.changes);
      expect(got.changeCount).toBe(whole.plan.changes.length);
      expect(got.saved).toEqual({ ...whole, plan: { ...whole.plan, changes: [] } });
      expect(got.restarts).toBe(0);
    }
  });

  it('reads the compact form stored for approvals, and a plan without changes', () => {
    const saved = savedOf(planOf(120, 9));
    expect(streamed(JSON.stringify(saved), 9).changes).toHaveLength(120);
    const empty = streamed(textOf(savedOf(planOf(0, 1))), 1);
    expect([empty.error, empty.changeCount, empty.changes]).toEqual([undefined, 0, []]);
  });

  it('checks a document whose keys come in another order with a second read, handing the changes over again', () => {
    const saved = savedOf(planOf(50, 4));
    // The same document with its keys reversed at the top and in the plan: the signature covers the same values.
    const plan = Object.fromEntries(Object.entries(saved.plan).reverse());
    const reordered = JSON.stringify(Object.fromEntries(Object.entries({ ...saved, plan }).reverse()), null, 2);
    const got = streamed(reordered, 4);
    expect(got.error).toBeUndefined();
    expect(got.restarts).toBe(1);
    expect(got.changes).toEqual(JSON.parse(JSON.stringify(saved.plan.changes)));
  });

  it('refuses what parseSavedPlanChunks refuses, with the same message', () => {
    const saved = savedOf(planOf(60, 5));
    const text = textOf(saved);
    const tampered = [
      text.replace('@acme.test"', '@evil.test"'),
      text.replace(/"thirdId": "E(\d+)"/, '"thirdId": "X$1"'),
      text.slice(0, text.length - 200),
      text.replace(/"id": "members:(\w+):E(\d+)"/, '"ident": "x"'),
      text.replace('"kind": "orgsync-saved-plan"', '"kind": "other"'),
      text.replace(/"changes": \[/, '"changes": 7, "was": ['),
      textOf(buildSavedPlan({ ...planOf(3, 1), syncId: 'other' }, { mirrorHash: 'm', sourceHash: 's' }, KEY)),
      textOf(buildSavedPlan(planOf(3, 1), { mirrorHash: 'm', sourceHash: 's' }, createHash('sha256').update('another state DB').digest())),
      JSON.stringify([...planJsonChunks(planOf(3, 1))].join('').length),
      '{"kind": "orgsync-saved-plan"}',
    ];
    for (const [i, t] of tampered.entries()) {
      const want = parsed(t);
      expect('error' in want, `case ${i}`).toBe(true);
      expect(streamed(t, i).error, `case ${i}`).toBe((want as { error: string }).error);
    }
    expect(streamed(tampered[0]!, 0).error).toContain('plan.json: the plan file was edited after it was written, or was made with another state DB (integrity check failed)');
    expect(streamed(tampered[3]!, 3).error).toMatch(/^plan\.json: not a saved plan of this orgsync: plan\.changes\.\d+\.id: /);
    expect(streamed(tampered[6]!, 6).error).toBe('plan.json: the plan is for sync other, the config is sync stream');
    const plain = [...planJsonChunks(planOf(3, 1))].join('');
    expect(streamed(plain, 1).error).toBe((parsed(plain) as { error: string }).error);
    expect(streamed(plain, 1).error).toContain('it is the output of `orgsync plan --output json`');
  });
});

describe('jsonArrayElements', () => {
  it('yields the elements of the array at the path, as JSON.parse reads them, over any chunk boundaries', () => {
    const saved = savedOf(planOf(300, 6));
    const text = JSON.stringify(saved);
    expect([...jsonArrayElements(cut(text, 6), ['plan', 'changes'])]).toEqual(JSON.parse(text).plan.changes);
    expect(() => [...jsonArrayElements(cut(text.slice(0, -5), 6), ['plan', 'changes'])]).toThrow(/unexpected end of the JSON text/);
  });
});

describe('reports from gathered changes', () => {
  it('the text and HTML reports of the kept rows are those of the whole plan', () => {
    for (const seed of [1, 2]) {
      const plan = { ...planOf(900, seed), refusal: { guard: 'delete_threshold', message: 'too many' } };
      const context = { departments: [{ id: 'root', parent_id: '', name: 'Acme' }], memberDepartments: { 'acc-3': 'root' } };
      const gathered = new GatheredChanges({ html: true, memberDepartments: context.memberDepartments });
      for (const c of plan.changes) gathered.add(c);
      const { changes: _all, ...head } = plan;
      const report = gathered.reportPlan(head);
      expect(report.changes).toHaveLength(plan.changes.length);
      expect([...planTextLines(report, { quarantine: [] })]).toEqual([...planTextLines(plan, { quarantine: [] })]);
      expect([...reportHtmlChunks(report, gathered.html!, context)].join('')).toBe([...planHtmlChunks(plan, context)].join(''));
      expect([...planJsonChunks(report, {}, 4096, plan.changes)].join('')).toBe([...planJsonChunks(plan, {}, 4096)].join(''));
    }
  });

  it('lists at most the rows of a group it keeps and counts the rest', () => {
    const gathered = new GatheredChanges();
    const plan = planOf(2000, 3);
    for (const c of plan.changes) gathered.add(c);
    const { changes: _all, ...head } = plan;
    const lines = [...planTextLines(gathered.reportPlan(head))];
    const creates = plan.counts.members.create;
    expect(lines).toContain(`members create (${creates})`);
    expect(lines).toContain(`  ... and ${(creates - 50).toLocaleString('en-US')} more members to create (--full prints all)`);
    expect(CHANGE_OPS).toContain('create');
  });
});

describe('ChangeCompactor', () => {
  it('keeps every change equal as JSON, sharing a body equal to the fields and the repeated values', () => {
    const plan = planOf(500, 7);
    const copies = JSON.parse(JSON.stringify(plan.changes)) as Change[];
    const compactor = new ChangeCompactor();
    const compacted = copies.map((c) => compactor.compact(c));
    expect([...jsonChunks(compacted, 'canonical')].join('')).toBe([...jsonChunks(plan.changes, 'canonical')].join(''));
    const creates = compacted.filter((c) => c.op === 'create' && c.entity === 'members');
    const sameBody = creates.filter((c) => !('extra' in c.request!.body!));
    expect(sameBody.length).toBeGreaterThan(10);
    for (const c of sameBody) expect(c.request!.body).toBe(c.fields);
    for (const c of creates.filter((x) => 'extra' in x.request!.body!)) expect(c.request!.body).not.toBe(c.fields);
    const byDept = creates.filter((c) => c.dependsOn[0] === creates[0]!.dependsOn[0]);
    expect(byDept.length).toBeGreaterThan(1);
    expect(byDept[1]!.dependsOn).toBe(byDept[0]!.dependsOn);
    expect(byDept[1]!.fields.department_id).toBe(byDept[0]!.fields.department_id);
  });
});

describe('SavedChangeLoader', () => {
  /** The changes `apply FILE` keeps of `saved` when this run planned `planned`, and the loader's counts. */
  function load(saved: SavedPlanFile, planned: readonly Change[]) {
    const loader = new SavedChangeLoader(planned);
    const changes: Change[] = [];
    streamSavedPlan(() => cut(textOf(saved), 5), 'plan.json', SYNC, KEY, { each: (c, i) => changes.push(loader.take(c, i)) });
    return { changes, counts: loader.counts };
  }

  it('keeps the planned change where it is the saved one, the parsed saved change wherever it differs or is missing', () => {
    const plan = planOf(300, 11);
    const replanned = plan.changes.slice(0, 290);
    // The re-plan differs at 7 (another reason) and 8 (its keys in another order only: the same change).
    replanned[7] = { ...replanned[7]!, reason: 'planned otherwise' };
    const { id, ...rest } = replanned[8]!;
    replanned[8] = { ...rest, id } as Change;
    const { changes, counts } = load(savedOf(plan), replanned);
    expect(counts).toEqual({ planned: 289, parsed: 11 });
    expect(changes[0]).toBe(replanned[0]);
    expect(changes[8]).toBe(replanned[8]);
    expect(changes[7]).not.toBe(replanned[7]);
    expect(changes[7]!.reason).toBe(plan.changes[7]!.reason);
    expect(changes[295]).not.toBe(plan.changes[295]);
    // What is applied reads exactly as the signed file.
    expect([...jsonChunks(changes, 'canonical')].join('')).toBe([...jsonChunks(plan.changes, 'canonical')].join(''));
  });

  it('takes the planner\'s compact member creates for the saved ones they equal', () => {
    const creates = Array.from({ length: 50 }, (_, i) =>
      memberCreateChange({ id: `members:create:E${i}`, thirdId: `E${i}`, reason: 'missing on the platform', fields: { display_name: `Person ${i}`, third_user_id: `E${i}`, department_id: { ref: 'departments:create:D1' } }, dependsOn: ['departments:create:D1'], paths: { department_id: { after: '/Acme/D1' } } }),
    );
    const plan: Plan = { ...planOf(0, 1), changes: creates, counts: countChanges(creates) };
    const { changes, counts } = load(savedOf(plan), creates);
    expect(counts).toEqual({ planned: 50, parsed: 0 });
    changes.forEach((c, i) => expect(c).toBe(creates[i]));
  });
});

describe('sameJson', () => {
  it('is true exactly when the two values have the same canonical JSON', () => {
    const date = new Date('2026-11-27T10:00:00Z');
    const values: unknown[] = [
      { a: 1, b: 'x', c: { ref: 'departments:create:D1' } },
      { b: 'x', a: 1, c: { ref: 'departments:create:D1' } },
      { a: 1, b: 'x', c: { ref: 'departments:create:D1' }, d: undefined, e: () => 1 },
      { a: 1, b: 'x', c: { ref: 'departments:create:D2' } },
      { a: 1, b: 'x' },
      { a: 1, b: 'x', c: { ref: 'departments:create:D1' }, z: null },
      [1, 'two', null, { three: 3 }],
      [1, 'two', undefined, { three: 3 }],
      [1, 'two', null, { three: 3 }, 4],
      { n: Number.NaN, m: -0 },
      { n: null, m: 0 },
      { at: date },
      { at: '2026-11-27T10:00:00.000Z' },
      { list: [] },
      { list: {} },
      'text',
      7,
      true,
      null,
    ];
    for (const x of values) {
      const parsed = JSON.parse(JSON.stringify(x) ?? 'null') as unknown;
      for (const y of values) expect(sameJson(parsed, y), `${JSON.stringify(x)} vs ${JSON.stringify(y)}`).toBe(canonicalJson(parsed) === canonicalJson(y));
    }
  });
});
