/**
 * Issue 31: the report's counts are grouped by hand, not by toLocaleString: the first Intl call of a process maps
 * ICU's data (some 5 MB of RSS), which a sync's summary added at its end. The text must stay what en-US wrote.
 */
import { describe, expect, it } from 'vitest';
import { accountingLines, type RecordAccounting } from '../../src/planner/report/accounting.js';
import { formatCount } from '../../src/planner/report/accounting.js';

const SAMPLES = [0, 1, 12, 123, 999, 1_000, 1_234, 12_345, 105_500, 999_999, 1_000_000, 1_234_567, 987_654_321, -1_234];

describe('counts in reports', () => {
  it('formatCount writes what toLocaleString("en-US") writes for whole numbers', () => {
    for (const n of SAMPLES) expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
    expect(formatCount(1_000_000)).toBe('1,000,000');
  });

  it('the accounting lines group thousands in totals, outcomes and left-alone counts', () => {
    const outcomes = (create: number) => ({ create, adopt: 0, update: 0, remove: 0, unchanged: 0 });
    const acc: RecordAccounting = {
      departments: { total: 5_000, outcomes: outcomes(5_000), leftAlone: [] },
      positions: { total: 500, outcomes: outcomes(500), leftAlone: [] },
      members: { total: 1_001_234, outcomes: outcomes(1_000_000), leftAlone: [{ reason: 'status_left', source: 'hr', count: 1_234 }] },
    };
    const lines = accountingLines(acc);
    expect(lines).toContain('  departments: 5,000 records: 5,000 to create, 0 to update, 0 unchanged');
    expect(lines).toContain('  members: 1,001,234 records: 1,000,000 to create, 0 to update, 0 unchanged, 1,234 left alone');
    expect(lines.some((l) => l.includes('1,234 members with status left: not created'))).toBe(true);
  });
});
