/**
 * Issue 31 point 1: saved plans written, signed and read in chunks. A plan of a million changes is more JSON than
 * V8's largest string (about 512 MB), so `plan --out` used to die with "Invalid string length". Here: the chunked
 * writer gives byte for byte what the old one-string writer gave (file, signature, hashes), no chunk is longer than
 * the chunk size plus one change, the streaming reader returns what JSON.parse returns however the bytes are cut, and
 * a saved plan whose JSON is longer than any string is signed and written.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DesiredMember, DesiredState } from '../../src/domain/index.js';
import { memberList, PLAN_FORMAT_VERSION } from '../../src/domain/index.js';
import { buildSavedPlan, canonicalJson, parseSavedPlan, readSavedPlan, savedPlanChunks, sourceSnapshotHash, writeSavedPlan, type SavedPlanFile } from '../../src/daemon/saved-plan.js';
import { jsonChunks } from '../../src/shared/json-chunks.js';
import { JsonStreamError, parseJsonChunks } from '../../src/shared/json-stream-reader.js';
import { tempDir } from '../helpers/temp.js';
import { memberCreate, planOf } from './saved-plan-large-fixtures.js';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef');

const inputs = { mirrorHash: `sha256:${'a'.repeat(64)}`, sourceHash: `sha256:${'b'.repeat(64)}` };

/** The writer and signer before issue 31: the whole document as one string. */
function oldWriter(saved: SavedPlanFile): { text: string; integrity: string } {
  const { integrity: _i, ...doc } = saved;
  return { text: `${JSON.stringify(saved, null, 2)}\n`, integrity: `hmac-sha256:${createHmac('sha256', KEY).update(canonicalJson(doc)).digest('hex')}` };
}

describe('chunked JSON: the same text as one JSON.stringify, in bounded chunks', () => {
  const values: unknown[] = [
    { b: 1, a: [1, { d: null, c: 'x' }, [], {}], '10': 'ten', '9': 'nine', u: undefined, f: () => 1, e: [undefined, () => 1], s: 'line\nbreak "quoted" \u2028 \ud83d\ude00' },
    [],
    {},
    { nested: { deeper: { list: [{ z: 1, y: [2, 3] }], empty: [] } }, n: -1.5e-7, t: true },
    'text',
    42,
    null,
    { date: new Date(Date.UTC(2026, 0, 2)), arr: [new Date(0)] },
  ];

  it('pretty, compact and canonical equal JSON.stringify(v, null, 2), JSON.stringify(v) and canonicalJson(v)', () => {
    for (const v of values) {
      expect([...jsonChunks(v, 'pretty', 1)].join('')).toBe(JSON.stringify(v, null, 2));
      expect([...jsonChunks(v, 'compact', 1)].join('')).toBe(JSON.stringify(v));
      expect([...jsonChunks(v, 'canonical', 1)].join('')).toBe(canonicalJson(v));
    }
  });

  it('no chunk is longer than the chunk size plus one array element, however long the array', () => {
    const changes = Array.from({ length: 20_000 }, (_, i) => memberCreate(i));
    const saved = buildSavedPlan(planOf(changes), inputs, KEY);
    // A change indented inside the document is a few characters longer than on its own: twice its length bounds it.
    let longestChange = 0;
    for (const c of changes) longestChange = Math.max(longestChange, 2 * JSON.stringify(c, null, 2).length);
    let longest = 0;
    let total = 0;
    for (const chunk of savedPlanChunks(saved, 4096)) {
      longest = Math.max(longest, chunk.length);
      total += chunk.length;
    }
    expect(total).toBe(oldWriter(saved).text.length);
    expect(longest).toBeLessThan(4096 + longestChange);
    expect(longest).toBeGreaterThanOrEqual(4096);
  });
});

describe('saved plan file: byte for byte what the one-string writer wrote', () => {
  it('the file, its integrity and a read back match the old writer, and the file is 0600', () => {
    const dir = tempDir('orgsync-saved-large-');
    const saved = buildSavedPlan(planOf(Array.from({ length: 5_000 }, (_, i) => memberCreate(i))), inputs, KEY);
    const old = oldWriter(saved);
    expect(saved.integrity).toBe(old.integrity);
    const file = join(dir, 'plan.json');
    writeSavedPlan(file, saved);
    expect(readFileSync(file, 'utf8')).toBe(old.text);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const back = readSavedPlan(file, 'large', KEY);
    expect(back).toEqual(JSON.parse(old.text));
    expect(parseSavedPlan(old.text, 'plan.json', 'large', KEY)).toEqual(back);
  });

  it('an edited file is refused by the streaming reader as before', () => {
    const dir = tempDir('orgsync-saved-large-');
    const saved = buildSavedPlan(planOf([memberCreate(1), memberCreate(2)]), inputs, KEY);
    const file = join(dir, 'plan.json');
    writeFileSync(file, oldWriter(saved).text.replace('p2@acme.test', 'p3@acme.test'));
    expect(() => readSavedPlan(file, 'large', KEY)).toThrow(`${file}: the plan file was edited after it was written, or was made with another state DB (integrity check failed); make a new plan`);
    const noId = JSON.parse(oldWriter(saved).text) as SavedPlanFile;
    delete (noId.plan.changes[1] as { id?: string }).id;
    writeFileSync(file, JSON.stringify(noId));
    expect(() => readSavedPlan(file, 'large', KEY)).toThrow(`${file}: not a saved plan of this orgsync: plan.changes.1.id: Invalid input: expected string, received undefined; make a new one with \`orgsync plan --out FILE\``);
    writeFileSync(file, '{"kind": "orgsync-saved-plan", "plan": [1, 2,');
    expect(() => readSavedPlan(file, 'large', KEY)).toThrow(`${file} is not a saved plan (not JSON: unexpected end of the JSON text at byte 45): save one with \`orgsync plan --out FILE\``);
  });

  it('the source snapshot hash is the one of the whole canonical JSON', () => {
    const member = (i: number) => ({ source: 'hr', source_id: `E${i}`, display_name: `P ${i}`, origin: { line: i }, roles: ['member'] });
    const desired = {
      departments: [{ source: 'hr', source_id: 'D2', name: 'Two', origin: { line: 2 } }, { source: 'hr', source_id: 'D1', name: 'One', origin: { line: 1 } }],
      positions: [],
      members: memberList(Array.from({ length: 3_000 }, (_, i) => member((i * 7919) % 3_000)) as unknown as DesiredMember[]),
      provided: { departments: true, positions: false, members: true },
      quarantine: [],
    } as unknown as DesiredState;
    const strip = (list: readonly { origin?: unknown; source_id: string }[]) => list.map(({ origin: _o, ...rest }) => rest).sort((a, b) => (a.source_id < b.source_id ? -1 : a.source_id > b.source_id ? 1 : 0));
    const old = `sha256:${createHash('sha256').update(canonicalJson({ departments: strip(desired.departments), positions: strip(desired.positions), members: strip([...desired.members]), provided: desired.provided })).digest('hex')}`;
    expect(sourceSnapshotHash(desired)).toBe(old);
  });
});

describe('streaming JSON reader', () => {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const docs = [text, '{"a":[1,2,{"b":[3]}],"c":{"d":"\\"}{[]","e":-0.5e3},"f":true,"g":null}', '[{"x":1}, "two", 3]', ' 12 ', '"s"', '{}', '[]', '{"__proto__": {"polluted": true}, "k": [ ]}'];

  it('returns what JSON.parse returns, whatever the chunk boundaries', () => {
    for (const doc of docs) {
      const bytes = Buffer.from(doc);
      for (const size of [1, 2, 3, 7, 64, bytes.length]) {
        const chunks: Buffer[] = [];
        for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
        expect(parseJsonChunks(chunks), `${doc.slice(0, 30)} in chunks of ${size}`).toEqual(JSON.parse(doc));
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses what JSON.parse refuses, naming the byte', () => {
    for (const bad of ['{"a" 1}', '{"a":1,}', '[1,]', '{"a":1} x', '{a:1}', '', '{"a":[1,2', '[1 2]', '{"a":tru}']) {
      expect(() => JSON.parse(bad), bad).toThrow();
      expect(() => parseJsonChunks([bad]), bad).toThrow(JsonStreamError);
    }
    expect(() => parseJsonChunks(['{"a" 1}'])).toThrow("expected ':' after the property name \"a\" at byte 5");
    expect(() => parseJsonChunks(['{"a": [1, {"b": tru}]}'])).toThrow(/^.+ \(in the value starting at byte 10\)$/);
  });

  it('stops at a top-level key when asked, without reading what follows', () => {
    expect(parseJsonChunks(['{"kind":"k","counts":{"n":1},"plan":', 'not json at all'], { stopAtKey: 'plan' })).toEqual({ kind: 'k', counts: { n: 1 } });
  });
});

describe('a saved plan longer than the longest string', () => {
  it('is signed and written in chunks, with the signature at its end', () => {
    // Each change carries the same 10,000-character description: little memory, over 512 MB of JSON. (Reading it back
    // would hold over 512 MB of strings: the reader is shown above to return what JSON.parse does at any cut.)
    const description = randomBytes(5_000).toString('hex');
    const changes = Array.from({ length: 52_000 }, (_, i) => memberCreate(i, description));
    const saved = buildSavedPlan(planOf(changes), inputs, KEY);
    expect(() => JSON.stringify(saved)).toThrow(RangeError);
    expect(saved.integrity).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const dir = tempDir('orgsync-saved-large-');
    const file = join(dir, 'plan.json');
    writeSavedPlan(file, saved);
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(2 ** 29);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const fd = openSync(file, 'r');
    try {
      const head = Buffer.alloc(64);
      readSync(fd, head, 0, 64, 0);
      expect(head.toString('utf8')).toBe(`{\n  "kind": "orgsync-saved-plan",\n  "format_version": ${PLAN_FORMAT_VERSION},\n  "sync_id": "large",\n`.slice(0, 64));
      const tail = Buffer.alloc(200);
      readSync(fd, tail, 0, 200, size - 200);
      expect(tail.toString('utf8').endsWith(`\n  "integrity": "${saved.integrity}"\n}\n`)).toBe(true);
    } finally {
      closeSync(fd);
    }
  }, 180_000);
});
