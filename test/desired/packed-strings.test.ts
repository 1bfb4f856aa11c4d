import { describe, expect, it } from 'vitest';
import { fastPropertiesCheck } from '../helpers/fast-properties.js';
import { PackedStrings } from '../../src/desired/packed-strings.js';
import { getPath, SourceCollector } from '../../src/desired/index.js';

describe('PackedStrings', () => {
  it('gives back every string as added, across blocks of 1,024, empty, two-byte and long ones included', () => {
    const s = new PackedStrings();
    const added: string[] = [];
    for (let i = 0; i < 3000; i++) {
      // A long block (over 65,535 characters: its ends take four bytes) among short ones, and a two-byte block.
      const v = i % 7 === 0 ? '' : i >= 1024 && i < 2048 ? `${'x'.repeat(100)}${i}` : i >= 2048 ? `Zoë ${i} 日本` : `e${i}@example.com`;
      s.add(v);
      added.push(v);
      // Readable at once, while its block is still being filled.
      expect(s.get(i)).toBe(v);
    }
    expect(added.map((_, i) => s.get(i))).toEqual(added);
  });
});

describe('members read by line (SourceCollector.addMemberAt)', () => {
  const lookupOf = (rec: Record<string, unknown>) => (name: string) => getPath(rec, name);
  const collector = () => new SourceCollector({ source: 'hr', authoritativeFields: [], members: { fields: { id: 'id', display_name: 'name', email: 'email', phone: 'phone', title: 'title', department: 'dept', status: 'status' } }, phoneRegion: 'US' });
  const row = (i: number) => ({ id: `E${i}`, name: `Ada ${i}`, email: i % 3 === 0 ? '' : `ada.${i}@example.com`, phone: i % 5 === 0 ? '' : `+1 212 555 ${String(1000 + (i % 9000)).padStart(4, '0')}`, title: i % 2 ? 'Engineer' : '', dept: 'D1', status: i % 4 === 0 ? '' : i % 7 === 0 ? 'left' : i % 11 === 0 ? 'suspended' : 'active' });

  it('reads as the plain record addMember builds: the same keys in the same order, JSON, spread and origin', () => {
    const byLine = collector();
    const byLocation = collector();
    for (let i = 0; i < 2100; i++) {
      byLine.addMemberAt(lookupOf(row(i)), 'members.csv:', i + 2);
      byLocation.addMember(lookupOf(row(i)), `members.csv:${i + 2}`);
    }
    const a = byLine.finish().members;
    const b = byLocation.finish().members;
    expect(a).toHaveLength(2100);
    expect(a.map((m) => JSON.stringify(m))).toEqual(b.map((m) => JSON.stringify(m)));
    expect(a.map((m) => Object.keys(m).join())).toEqual(b.map((m) => Object.keys(m).join()));
    expect(a[1500]).toStrictEqual(b[1500]);
    expect({ ...a[7] }).toStrictEqual({ ...b[7] });
    expect(a[2099]!.origin).toEqual({ source: 'hr', location: 'members.csv:2101' });
    expect(Object.getPrototypeOf(a[0])).toBe(Object.prototype);
  });

  it('keeps every record in fast mode, whatever its status and in every file (no dictionary of about 430 bytes a member)', () => {
    const hasFastProperties = fastPropertiesCheck();
    // Two files, as two sources or two daemon runs read them: each brings its own accessors.
    for (const file of ['first.csv:', 'second.csv:']) {
      const c = collector();
      for (let i = 0; i < 200; i++) c.addMemberAt(lookupOf(row(i)), file, i + 2);
      const members = c.finish().members;
      expect(new Set(members.map((m) => m.status))).toEqual(new Set([undefined, 'active', 'left', 'suspended']));
      expect(members.filter((m) => !hasFastProperties(m)).map((m) => m.source_id)).toEqual([]);
    }
  });

  it('takes an assignment as a plain data property in the same place among the keys', () => {
    const c = collector();
    c.addMemberAt(lookupOf(row(1)), 'members.csv:', 2);
    const m = c.finish().members[0]!;
    const keys = Object.keys(m);
    m.email = 'other@example.com';
    m.status = 'left';
    m.origin = { source: 'hr', location: 'elsewhere' };
    expect(m).toMatchObject({ source_id: 'E1', email: 'other@example.com', status: 'left', origin: { location: 'elsewhere' } });
    expect(Object.keys(m)).toEqual(keys);
    expect(Object.getOwnPropertyDescriptor(m, 'email')).toEqual({ value: 'other@example.com', writable: true, enumerable: true, configurable: true });
  });
});
