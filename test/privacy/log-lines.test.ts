/**
 * Issue 29 point 3 at the logger: an applied change's JSON line names the member by source id (`line`); the line
 * with the person's name (`detail`) is written only with log.personal_data, and a terminal shows it.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, terminalLine } from '../../src/observability/logger.js';
import { changeLine, memberCreateChange } from '../../src/domain/index.js';

function jsonLines(personalData: boolean | undefined): Record<string, unknown>[] {
  const lines: string[] = [];
  const destination = { write: (s: string) => lines.push(s) > 0 } as unknown as NodeJS.WritableStream;
  const log = createLogger({ level: 'info', pretty: false, destination, secrets: [], redactPaths: [], ...(personalData === undefined ? {} : { personalData }) });
  log.info({ third_id: 'E1002', line: 'CREATE member E1002 in /Acme/Sales', detail: 'CREATE member E1002 "Lars Okafor" in /Acme/Sales' }, 'change applied');
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('change lines in the logs', () => {
  it('JSON lines leave the name out unless log.personal_data is true', () => {
    for (const off of [undefined, false]) {
      const [line] = jsonLines(off);
      expect(line).toMatchObject({ level: 'info', msg: 'change applied', third_id: 'E1002', line: 'CREATE member E1002 in /Acme/Sales' });
      expect(line).not.toHaveProperty('detail');
      expect(JSON.stringify(line)).not.toContain('Lars');
    }
    expect(jsonLines(true)[0]).toMatchObject({ line: 'CREATE member E1002 in /Acme/Sales', detail: 'CREATE member E1002 "Lars Okafor" in /Acme/Sales' });
  });

  it('a terminal line shows the name (the operator in front of it ran the command)', () => {
    const json = JSON.stringify({ time: '2026-11-27T10:00:00.000Z', level: 20, msg: 'change applied', line: 'CREATE member E1002 in /Acme/Sales', detail: 'CREATE member E1002 "Lars Okafor" in /Acme/Sales' });
    expect(terminalLine(json)).toBe('10:00:00 DEBUG CREATE member E1002 "Lars Okafor" in /Acme/Sales\n');
  });

  it('changeLine without the person names a member by source id, and keeps a department\'s name', () => {
    const c = memberCreateChange({ id: 'members:create:E1002', thirdId: 'E1002', reason: 'missing on the platform', fields: { display_name: 'Lars Okafor', email: 'lars@acme.test', department_id: 'd1' }, dependsOn: [], paths: { department_id: { after: '/Acme/Sales' } } });
    expect(changeLine(c)).toBe('CREATE member E1002 "Lars Okafor" in /Acme/Sales');
    expect(changeLine(c, false)).toBe('CREATE member E1002 in /Acme/Sales');
    expect(changeLine({ id: 'departments:update:eng', entity: 'departments', op: 'update', thirdId: 'eng', description: '', reason: '', fields: { name: 'Engineering' }, dependsOn: [] }, false)).toBe('UPDATE department eng "Engineering"');
  });
});
