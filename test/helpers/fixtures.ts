/**
 * Fixture files the tests write, the one CSV writer among them: a header and one line per row, every line ending in a
 * newline, a cell quoted only when it holds a quote, a comma or a line break (as an HR export writes it).
 * test/tools/test-helpers-once.test.ts keeps test files from writing their own again.
 */
import { writeFileSync } from 'node:fs';

/** A cell's value: undefined is an empty cell. */
export type CsvValue = string | number | undefined;

/** One CSV cell, quoted when it needs to be. */
export function csvCell(value: CsvValue): string {
  const s = value === undefined ? '' : String(value);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Writes `file` as CSV: the header line, then one line per row. Returns the file's path. */
export function writeCsv(file: string, header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** The columns of a staff file (`id,name,email`), the smallest member source the guard and approval tests read. */
export const STAFF_HEADER = ['id', 'name', 'email'] as const;

/** Writes a staff file (id, name, email per row). */
export function writeStaffCsv(file: string, rows: Iterable<readonly CsvValue[]>): string {
  return writeCsv(file, STAFF_HEADER, rows);
}

/** Staff rows m<from> .. m<count - 1>: `m3, Member 3, m3@acme.test`. */
export function staffRows(count: number, from = 0): string[][] {
  return Array.from({ length: count - from }, (_, k) => [`m${k + from}`, `Member ${k + from}`, `m${k + from}@acme.test`]);
}
