/**
 * The project's deterministic synthetic organisation: the same options always give the same records, byte for byte,
 * so the sources, mirror and sync benchmarks (and tests that need volume) share one data set.
 *
 * - `generateOrg()` returns desired-shaped records (src/domain/desired.ts) in memory.
 * - `iterateMembers()` yields the members one by one (300,000 members without holding them all).
 * - `writeOrgCsv()` streams the CSV files of the issue-4 config (`departments.csv`, `positions.csv`, `members.csv`)
 *   and `csvSourceConfig()` is that config's `sources:` entry.
 *
 * Reading the CSV files with `csvSourceConfig()` yields exactly `generateOrg()` with the same options.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import type { DesiredDepartment, DesiredMember, DesiredMemberStatus, DesiredPosition } from '../../src/domain/desired.js';
import { mulberry32 as prng } from '../../test/helpers/prng.js';

/** What to generate. */
export interface SyntheticOrgOptions {
  /** Number of members. */
  members: number;
  /** Number of departments (a tree, at most about 6 levels deep). */
  departments: number;
  /** Number of positions; members' titles are position names. */
  positions: number;
  /** Any integer; the same seed gives the same organisation. */
  seed: number;
  /**
   * Churn for the daily-run bench: every member whose index is a multiple of this gets the next position's name as
   * title (100: 1% of the members changed); every other byte stays as without it. Absent: none.
   */
  titleChurnEvery?: number;
}

/** A synthetic organisation in the normalised desired shape. */
export interface SyntheticOrg {
  departments: DesiredDepartment[];
  positions: DesiredPosition[];
  members: DesiredMember[];
}

/** One member as written to members.csv (before mapping): the raw columns. */
export interface SyntheticMemberRow {
  employee_id: string;
  first_name: string;
  last_name: string;
  email: string;
  /** National US format, e.g. "(201) 555-0123": the connector turns it into E.164 with default region US. */
  phone: string;
  title: string;
  dept_id: string;
  /** `active`, `leave` or `terminated` (the status_map). */
  status: 'active' | 'leave' | 'terminated';
}

const FIRST = ['Ada', 'Alan', 'Grace', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Edsger', 'Radia', 'Tim', 'Hedy', 'John', 'Katherine', 'Donald', 'Shafi', 'Leslie', 'Sophie', 'Niklaus', 'Anita', 'Bjarne', 'Karen', 'Guido', 'Mary', 'James', 'Lin', 'Wei', 'Yuki', 'Amara'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Allen', 'Dijkstra', 'Perlman', 'Berners-Lee', 'Lamarr', 'McCarthy', 'Johnson', 'Knuth', 'Goldwasser', 'Lamport', 'Wilson', 'Wirth', 'Borg', 'Stroustrup', 'Jones', 'van Rossum', 'Shaw', 'Gosling', 'Chen', 'Zhang', 'Tanaka', 'Okafor'];
const AREAS = ['Engineering', 'Sales', 'Finance', 'Marketing', 'Support', 'Legal', 'Operations', 'Research', 'People', 'Design', 'Security', 'Data'];
const ROLES = ['Engineer', 'Manager', 'Analyst', 'Designer', 'Specialist', 'Director', 'Consultant', 'Coordinator', 'Architect', 'Administrator'];
const LEVELS = ['Junior', '', 'Senior', 'Staff', 'Principal', 'Lead'];
const AREA_CODES = [201, 202, 212, 303, 312, 415, 503, 617, 646, 702, 713, 818];

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The department source id of index i (0-based): D00001... */
export const departmentId = (i: number): string => `D${pad(i + 1, 5)}`;
/** The position source id of index i (0-based): P0001... */
export const positionId = (i: number): string => `P${pad(i + 1, 4)}`;
/** The member source id of index i (0-based): E0000001... */
export const memberId = (i: number): string => `E${pad(i + 1, 7)}`;

function makeDepartments(opts: SyntheticOrgOptions): DesiredDepartment[] {
  const rand = prng(opts.seed ^ 0x0d0d);
  const out: DesiredDepartment[] = [];
  const tops = Math.max(1, Math.min(opts.departments, AREAS.length));
  for (let i = 0; i < opts.departments; i++) {
    if (i < tops) {
      out.push({ source_id: departmentId(i), name: AREAS[i]!, sort_order: i });
      continue;
    }
    // Parent among the earlier departments, biased to recent ones: a bushy tree a few levels deep.
    const parent = Math.floor(rand() * Math.min(i, tops + Math.floor(i / 3)));
    out.push({ source_id: departmentId(i), name: `${AREAS[i % AREAS.length]} ${i + 1}`, parent_source_id: departmentId(parent), sort_order: i % 100 });
  }
  return out;
}

function positionName(i: number): string {
  const base = `${LEVELS[i % LEVELS.length]} ${ROLES[Math.floor(i / LEVELS.length) % ROLES.length]}`.trim();
  const round = Math.floor(i / (LEVELS.length * ROLES.length));
  return round === 0 ? base : `${base} ${round + 1}`;
}

function makePositions(opts: SyntheticOrgOptions): DesiredPosition[] {
  return Array.from({ length: opts.positions }, (_, i) => ({ source_id: positionId(i), name: positionName(i) }));
}

/** The raw CSV rows of the members, one by one, deterministically. */
export function* iterateMemberRows(opts: SyntheticOrgOptions): Generator<SyntheticMemberRow> {
  const rand = prng(opts.seed ^ 0x5eed);
  const positions = Math.max(1, opts.positions);
  for (let i = 0; i < opts.members; i++) {
    const first = FIRST[Math.floor(rand() * FIRST.length)]!;
    const last = LAST[Math.floor(rand() * LAST.length)]!;
    const area = AREA_CODES[Math.floor(rand() * AREA_CODES.length)]!;
    const line = 1000 + (i % 9000);
    const exchange = 200 + (Math.floor(i / 9000) % 800);
    const r = rand();
    const status = r < 0.9 ? 'active' : r < 0.95 ? 'leave' : 'terminated';
    const dept = opts.departments > 0 ? departmentId(Math.floor(rand() * opts.departments)) : '';
    const titleIndex = Math.floor(rand() * positions);
    const churned = opts.titleChurnEvery !== undefined && i % opts.titleChurnEvery === 0;
    const title = opts.positions > 0 ? positionName(churned ? (titleIndex + 1) % positions : titleIndex) : '';
    yield {
      employee_id: memberId(i),
      first_name: first,
      last_name: last,
      email: `${first}.${last.replace(/[^A-Za-z]/g, '')}.${i + 1}@Example.com`,
      phone: `(${area}) ${exchange}-${line}`,
      title,
      dept_id: dept,
      status,
    };
  }
}

const STATUS: Record<SyntheticMemberRow['status'], DesiredMemberStatus> = { active: 'active', leave: 'suspended', terminated: 'left' };

/** A raw row as the connector normalises it (lower-cased e-mail, E.164 phone, mapped status). */
export function memberFromRow(row: SyntheticMemberRow): DesiredMember {
  const digits = row.phone.replace(/\D/g, '');
  const m: DesiredMember = {
    source_id: row.employee_id,
    display_name: `${row.first_name} ${row.last_name}`,
    email: row.email.toLowerCase(),
    phone: `+1${digits}`,
    status: STATUS[row.status],
  };
  if (row.title) m.title = row.title;
  if (row.dept_id) m.department_source_id = row.dept_id;
  return m;
}

/** Desired-shaped members, one by one. */
export function* iterateMembers(opts: SyntheticOrgOptions): Generator<DesiredMember> {
  for (const row of iterateMemberRows(opts)) yield memberFromRow(row);
}

/** The whole synthetic organisation in memory (desired-shaped, deterministic). */
export function generateOrg(opts: SyntheticOrgOptions): SyntheticOrg {
  return { departments: makeDepartments(opts), positions: makePositions(opts), members: [...iterateMembers(opts)] };
}

/** Quotes a CSV field only when needed (RFC 4180). */
function csvField(v: string | number | undefined): string {
  const s = v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function writeLines(path: string, header: string[], rows: Iterable<(string | number | undefined)[]>): Promise<void> {
  const out = createWriteStream(path, { encoding: 'utf8' });
  let buf = `${header.join(',')}\n`;
  for (const row of rows) {
    buf += `${row.map(csvField).join(',')}\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

/** Paths of the files `writeOrgCsv` wrote. */
export interface SyntheticCsvFiles {
  departments: string;
  positions: string;
  members: string;
}

/**
 * Streams the organisation as the three CSV files of the issue-4 config into `dir` (created if needed):
 * departments.csv (dept_id,name,parent_id,sort_order), positions.csv (pos_id,name),
 * members.csv (employee_id,first_name,last_name,email,phone,title,dept_id,status).
 */
export async function writeOrgCsv(dir: string, opts: SyntheticOrgOptions): Promise<SyntheticCsvFiles> {
  await mkdir(dir, { recursive: true });
  const files = { departments: join(dir, 'departments.csv'), positions: join(dir, 'positions.csv'), members: join(dir, 'members.csv') };
  await writeLines(files.departments, ['dept_id', 'name', 'parent_id', 'sort_order'], makeDepartments(opts).map((d) => [d.source_id, d.name, d.parent_source_id ?? '', d.sort_order]));
  await writeLines(files.positions, ['pos_id', 'name'], makePositions(opts).map((p) => [p.source_id, p.name]));
  function* memberRows() {
    for (const r of iterateMemberRows(opts)) yield [r.employee_id, r.first_name, r.last_name, r.email, r.phone, r.title, r.dept_id, r.status];
  }
  await writeLines(files.members, ['employee_id', 'first_name', 'last_name', 'email', 'phone', 'title', 'dept_id', 'status'], memberRows());
  return files;
}

/**
 * The `sources:` entry that reads `writeOrgCsv`'s files (the issue-4 config, plus sort_order and the phone region).
 * File paths are relative to the config file, so put the config in the same folder or pass `dir`.
 */
export function csvSourceConfig(dir = '.'): Record<string, unknown> {
  const f = (name: string) => (dir === '.' ? name : join(dir, name));
  return {
    name: 'hr',
    type: 'csv',
    phone_region: 'US',
    departments: { file: f('departments.csv'), fields: { id: 'dept_id', name: 'name', parent: 'parent_id', sort_order: 'sort_order' } },
    positions: { file: f('positions.csv'), fields: { id: 'pos_id', name: 'name' } },
    members: {
      file: f('members.csv'),
      fields: { id: 'employee_id', display_name: '{first_name} {last_name}', email: 'email', phone: 'phone', title: 'title', department: 'dept_id', status: 'status' },
      status_map: { active: 'active', leave: 'suspended', terminated: 'left' },
    },
  };
}
