/**
 * Large CSV files are parsed on a worker thread (src/sources/csv/row-thread.ts). Whatever the file, that read must
 * be indistinguishable from the in-thread one: the same records, quarantine, warnings and errors (with the same
 * file, line and column), over the malformed corpus and over seeded random files with quoting, embedded newlines,
 * comments, skipped rows, byte-order marks, other encodings and broken rows. And no read leaves a thread behind:
 * not at the end, not after an error, not after an abort.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterEach, describe, expect, it } from 'vitest';
import type { DesiredState } from '../../src/domain/desired.js';
import { PhoneCache } from '../../src/domain/phone-cache.js';
import { readDesiredState } from '../../src/sources/index.js';
import { csvReading } from '../../src/sources/csv/read-csv.js';
import { csvThreads } from '../../src/sources/csv/row-thread.js';
import { silentLogger } from '../../src/shared/logger.js';
import { mulberry32 } from '../helpers/prng.js';
import { tempDir } from '../helpers/temp.js';
import { csvSource, FIXTURES, instantClock, sourcesConfig } from './support.js';

type Outcome = { state: DesiredState } | { error: { code: unknown; message: string } };

const defaultThreshold = csvReading.threadMinBytes;
afterEach(() => {
  csvReading.threadMinBytes = defaultThreshold;
  expect(csvThreads.running).toBe(0);
});

async function outcome(sources: unknown[], dir: string, opts: { signal?: AbortSignal; phoneCache?: PhoneCache } = {}): Promise<Outcome> {
  try {
    return { state: await readDesiredState(sourcesConfig(sources, dir), { env: {}, logger: silentLogger, clock: instantClock, ...opts }) };
  } catch (err) {
    const e = err as { code?: unknown; message: string };
    return { error: { code: e.code, message: e.message } };
  }
}

/** The outcome of the in-thread read and of the read on a thread, and how many threads the latter started. */
async function bothWays(sources: unknown[], dir: string): Promise<{ here: Outcome; thread: Outcome; threads: number }> {
  csvReading.threadMinBytes = Number.POSITIVE_INFINITY;
  const here = await outcome(sources, dir);
  csvReading.threadMinBytes = 0;
  const before = csvThreads.started;
  const thread = await outcome(sources, dir);
  return { here, thread, threads: csvThreads.started - before };
}

const ENCODING_OF: Record<string, string> = { 'gb18030.csv': 'gb18030', 'utf16le.csv': 'utf-16le' };

describe('CSV files read on a worker thread', () => {
  const corpus = readdirSync(join(FIXTURES, 'malformed')).filter((f) => f.endsWith('.csv'));

  it.each(corpus)('the malformed corpus: %s gives the same outcome on a thread', async (file) => {
    const encoding = ENCODING_OF[file];
    const source = file.startsWith('departments-')
      ? csvSource({ positions: undefined }, 'malformed/members-two-depts.csv', `malformed/${file}`)
      : csvSource({ positions: undefined, ...(encoding ? { encoding } : {}) }, `malformed/${file}`, 'malformed/departments-plain.csv');
    const { here, thread, threads } = await bothWays([source], FIXTURES);
    expect(thread).toEqual(here);
    // One thread per file read (departments and members), none when the read stopped at the first file.
    expect(threads).toBeGreaterThanOrEqual(1);
  });

  it('the good fixtures: departments, positions and members, the same on threads', async () => {
    const { here, thread, threads } = await bothWays([csvSource()], FIXTURES);
    expect('state' in here && here.state.members.length).toBeGreaterThan(0);
    expect(thread).toEqual(here);
    expect(threads).toBe(3);
  });

  it('seeded random files (quoting, newlines in fields, comments, skip_rows, BOMs, encodings, broken rows): the same outcome', async () => {
    const dir = tempDir();
    let failures = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const { source, errorExpected } = randomExport(dir, seed);
      const { here, thread } = await bothWays([source], dir);
      expect({ seed, ...thread }).toEqual({ seed, ...here });
      if ('error' in here) failures++;
      else expect(errorExpected, `seed ${seed}`).toBe(false);
    }
    // The corpus exercises both outcomes: files that read and files that fail.
    expect(failures).toBeGreaterThan(5);
    expect(failures).toBeLessThan(55);
  });

  it('a file of threadMinBytes or more takes the thread by default; the small ones stay on this thread', async () => {
    const dir = tempDir();
    const rows = ['employee_id,name,email'];
    for (let bytes = 0, j = 0; bytes < defaultThreshold; j++) {
      rows.push(`E${j},Person number ${j} of the test export,person.${j}@example.com`);
      bytes += rows.at(-1)!.length + 1;
    }
    writeFileSync(join(dir, 'members.csv'), `${rows.join('\n')}\n`);
    writeFileSync(join(dir, 'departments.csv'), 'id,name\nD1,Top\n');
    const source = {
      name: 'hr',
      type: 'csv',
      departments: { file: 'departments.csv', fields: { id: 'id', name: 'name' } },
      members: { file: 'members.csv', fields: { id: 'employee_id', display_name: 'name', email: 'email' } },
    };
    const before = csvThreads.started;
    const got = await outcome([source], dir);
    expect(csvThreads.started - before).toBe(1);
    expect('state' in got && got.state.members.length).toBe(rows.length - 1);
    expect('state' in got && [...got.state.members].at(-1)).toEqual({
      source_id: `E${rows.length - 2}`,
      display_name: `Person number ${rows.length - 2} of the test export`,
      email: `person.${rows.length - 2}@example.com`,
      status: 'active',
      origin: { source: 'hr', location: `members.csv:${rows.length}` },
    });
  });

  it('a mapping slower than the parse (the thread waits for it): the same records and lines as the in-thread read', async () => {
    const dir = tempDir();
    // 20,000 records, a quoted newline every 7th, so a record's line is not its index; each phone goes to the cache.
    // (A name with a newline is quarantined for its control character, with its location: E19999 is, at lines 22858-22859.)
    const rows = Array.from({ length: 20_000 }, (_, i) => `E${i},"Person${i % 7 === 0 ? '\n' : ' '}${i}",1 (201) ${200 + Math.floor(i / 10000)}-${String(i % 10000).padStart(4, '0')},p${i}@example.com`);
    writeFileSync(join(dir, 'members.csv'), `id,name,phone,email,unused\n${rows.map((r) => `${r},x`).join('\n')}\n`);
    const source = { name: 'hr', type: 'csv', phone_region: 'US', members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', phone: 'phone', email: 'email' } } };
    const slowCache = () => {
      const cache = new PhoneCache();
      const lookup = cache.lookup.bind(cache);
      cache.lookup = (raw, region) => {
        // About 50 us a record: the thread parses the file long before the mapping is done, and must wait for it.
        for (const until = performance.now() + 0.05; performance.now() < until; );
        return lookup(raw, region);
      };
      return cache;
    };
    csvReading.threadMinBytes = Number.POSITIVE_INFINITY;
    const here = await outcome([source], dir, { phoneCache: slowCache() });
    csvReading.threadMinBytes = 0;
    const thread = await outcome([source], dir, { phoneCache: slowCache() });
    if (!('state' in here)) throw new Error(here.error.message);
    expect([...here.state.members].at(-1)).toMatchObject({ source_id: 'E19998', origin: { location: 'members.csv:22857' } });
    expect(here.state.quarantine.at(-1)).toMatchObject({ source_id: 'E19999', reason: 'control_characters', location: 'members.csv:22859' });
    expect(thread).toEqual(here);
  });

  it('an abort while the thread parses stops the read with the abort, and the thread with it', async () => {
    const dir = tempDir();
    // "1 (201) ..." is a shape only libphonenumber-js answers, so the phone cache is asked: the abort comes from there.
    writeFileSync(join(dir, 'members.csv'), `id,name,phone\n${Array.from({ length: 5000 }, (_, i) => `E${i},Person ${i},1 (201) 555-${String(i % 10000).padStart(4, '0')}`).join('\n')}\n`);
    const source = { name: 'hr', type: 'csv', phone_region: 'US', members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', phone: 'phone' } } };
    csvReading.threadMinBytes = 0;
    const ac = new AbortController();
    const phoneCache = new PhoneCache();
    const lookup = phoneCache.lookup.bind(phoneCache);
    let lookups = 0;
    phoneCache.lookup = (raw, region) => {
      if (++lookups === 10) ac.abort();
      return lookup(raw, region);
    };
    const got = await outcome([source], dir, { signal: ac.signal, phoneCache });
    expect(got).toEqual({ error: { code: 20, message: 'This operation was aborted' } });
    // The batch being mapped stops at the abort: the rest of the file is never mapped.
    expect(lookups).toBe(10);
  });

  it('an error of the mapping on this thread stops the thread and fails the source with it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'members.csv'), `id,name,phone\n${Array.from({ length: 2000 }, (_, i) => `E${i},Person ${i},1 (201) 555-${String(i).padStart(4, '0')}`).join('\n')}\n`);
    const source = { name: 'hr', type: 'csv', phone_region: 'US', members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', phone: 'phone' } } };
    csvReading.threadMinBytes = 0;
    const phoneCache = new PhoneCache();
    phoneCache.lookup = () => {
      throw new Error('the phone cache broke');
    };
    expect(await outcome([source], dir, { phoneCache })).toEqual({ error: { code: 'SOURCE_UNREADABLE', message: 'source "hr": the phone cache broke' } });
  });
});

describe('contacts checked as records arrive', () => {
  it('one source: repeated e-mails and phones among members not left are quarantined, a left member may share one', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'members.csv'),
      ['id,name,email,phone,status', 'E1,Ada,ada@example.com,,active', 'E2,Alan,ADA@example.com,,active', 'E3,Grace,grace@example.com,(201) 555-0100,left', 'E4,Linus,linus@example.com,(201) 555-0100,active', 'E5,Edsger,,(201) 555-0101,', 'E6,Barbara,,+1 201 555 0101,active'].join('\n'),
    );
    const source = { name: 'hr', type: 'csv', phone_region: 'US', members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', email: 'email', phone: 'phone', status: 'status' } } };
    const got = await outcome([source], dir);
    if (!('state' in got)) throw new Error(got.error.message);
    expect([...got.state.members].map((m) => m.source_id)).toEqual(['E3', 'E4']);
    expect(got.state.quarantine.map((q) => [q.source_id, q.reason])).toEqual([
      ['E1', 'duplicate_email'],
      ['E2', 'duplicate_email'],
      ['E5', 'duplicate_phone'],
      ['E6', 'duplicate_phone'],
    ]);
  });

  it('two sources whose members are each unique but share an e-mail across sources: both quarantined', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.csv'), 'id,name,email\nE1,Ada,shared@example.com\n');
    writeFileSync(join(dir, 'b.csv'), 'id,name,email\nE2,Alan,shared@example.com\n');
    const src = (name: string, file: string) => ({ name, type: 'csv', members: { file, fields: { id: 'id', display_name: 'name', email: 'email' } } });
    const got = await outcome([src('a', 'a.csv'), src('b', 'b.csv')], dir);
    if (!('state' in got)) throw new Error(got.error.message);
    expect([...got.state.members]).toEqual([]);
    expect(got.state.quarantine.map((q) => [q.source_id, q.reason, q.message])).toEqual([
      ['E1', 'duplicate_email', 'e-mail "shared@example.com" is also used by member "E2"'],
      ['E2', 'duplicate_email', 'e-mail "shared@example.com" is also used by member "E1"'],
    ]);
  });
});

/** A random members export and its source config; `errorExpected` when a broken row was written. */
function randomExport(dir: string, seed: number): { source: Record<string, unknown>; errorExpected: boolean } {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const delimiter = pick([',', ';', '\t', '|']);
  const configDelimiter = rnd() < 0.3 ? 'auto' : delimiter;
  const comment = rnd() < 0.3 ? '#' : undefined;
  const skipRows = rnd() < 0.3 ? 1 + Math.floor(rnd() * 2) : 0;
  const encoding = pick(['utf-8', 'utf-8', 'utf-16le', 'gb18030', 'latin1']);
  const eol = rnd() < 0.3 ? '\r\n' : '\n';
  const words = ['Ada', 'Lovelace', 'Zoë', 'Nuñez', '张伟', 'O\'Brien', 'van der Berg', 'Smith, Jr.', 'say "hi"', 'two\nlines', ' padded ', '', 'a|b', 'x;y', 'tab\there', '#hash'];
  const emails = ['ada@example.com', 'ADA@Example.com', 'not-an-email', '', 'zoë@exämple.de', 'x@y', 'grace@example.org'];
  const phones = ['(201) 555-0123', '+44 20 7946 0958', '12345', '', '1 (201) 555-0199', '201.555.0142'];
  const statuses = ['active', 'leave', 'terminated', '', 'Retired', 'ACTIVE'];
  // Columns nobody maps (wide HR exports), anywhere in the header; without a header (mapped by number) at the end.
  const hasHeader = rnd() >= 0.2;
  const mapped = ['employee_id', 'first_name', 'last_name', 'email', 'phone', 'title', 'status'];
  const header = [...mapped];
  for (let extra = Math.floor(rnd() * 7); extra > 0; extra--) header.splice(hasHeader ? Math.floor(rnd() * (header.length + 1)) : header.length, 0, `unused_${extra}`);
  const quote = (v: string) => {
    const needs = v.includes(delimiter) || v.includes('"') || v.includes('\n') || v.includes('\r') || (comment !== undefined && v.startsWith(comment));
    return needs || rnd() < 0.1 ? `"${v.replaceAll('"', '""')}"` : v;
  };
  // Latin-1 cannot hold every word: the file is written as latin1 and read as it, so unmappable characters become "?".
  const lines: string[] = [];
  for (let i = 0; i < skipRows; i++) lines.push(`Report ${i + 1}${delimiter}generated for the test`);
  if (hasHeader) lines.push(header.join(delimiter));
  let errorExpected = false;
  // Some files span several of the thread's batches (512 records each).
  const rows = rnd() < 0.2 ? 600 + Math.floor(rnd() * 1200) : Math.floor(rnd() * 300);
  for (let r = 0; r < rows; r++) {
    if (comment !== undefined && rnd() < 0.05) lines.push(`# a comment${delimiter}with a "quote`);
    if (rnd() < 0.03) lines.push('');
    const id = rnd() < 0.05 ? `E${Math.floor(rnd() * 10)}` : `E${seed}-${r}`;
    const byName: Record<string, string> = { employee_id: id, first_name: pick(words), last_name: pick(words), email: pick(emails), phone: pick(phones), title: pick(words), status: pick(statuses) };
    const values = header.map((name) => byName[name] ?? pick(words));
    let line = values.map(quote).join(delimiter);
    const broken = rnd() * (rows > 600 ? 4 : 1);
    if (broken < 0.004) {
      line = values.slice(1).map(quote).join(delimiter); // a field short
      errorExpected = true;
    } else if (broken < 0.008) {
      line = `${line}${delimiter}"never closed`;
      errorExpected = true;
    }
    lines.push(line);
  }
  const text = (rnd() < 0.3 ? '\ufeff' : '') + lines.join(eol) + (rnd() < 0.8 ? eol : '');
  const file = `members-${seed}.csv`;
  writeFileSync(join(dir, file), encoding === 'utf-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, encoding));
  return {
    source: {
      name: 'hr',
      type: 'csv',
      phone_region: 'US',
      delimiter: configDelimiter,
      encoding,
      ...(comment !== undefined ? { comment } : {}),
      ...(skipRows > 0 ? { skip_rows: skipRows } : {}),
      ...(hasHeader ? {} : { header: false }),
      members: {
        file,
        fields: hasHeader
          ? { id: 'employee_id', display_name: '{first_name} {last_name}', email: 'email', phone: 'phone', title: 'title', status: 'status' }
          : { id: '1', display_name: '{2} {3}', email: '4', phone: '5', title: '6', status: '7' },
        status_map: { leave: 'suspended', terminated: 'left' },
      },
    },
    errorExpected,
  };
}
