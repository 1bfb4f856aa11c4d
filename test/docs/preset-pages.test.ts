/**
 * Every preset page (docs/sources/<preset>.md) opens with a complete config that the project's own loader accepts
 * with nothing but the environment's secrets filled in, and its source gives only preset, base_url and auth; the page
 * says how departments are derived and how paging is set; its field table names every vendor field the preset reads;
 * and the README's documentation table and docs/sources/README.md link every page (issue 32 point 4, issue 28).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { PRESETS, type Preset, type PresetName } from '../../src/config/presets/index.js';
import { compileField } from '../../src/desired/index.js';
import { repoRoot } from '../daemon/support.js';

const page = (name: string) => readFileSync(join(repoRoot, 'docs', 'sources', `${name}.md`), 'utf8');
const NAMES = Object.keys(PRESETS) as PresetName[];

/** A value for each `${VAR}` of the opening config, of the kind its name says. */
function envFor(yaml: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name] of yaml.matchAll(/\$\{([A-Z0-9_]+)\}/g)) {
    env[name!] = /URL$|SERVER$/.test(name!) ? 'https://tenant.example.com/api' : /EMAIL$/.test(name!) ? 'admin@example.com' : name === 'ORGSYNC_API_KEY' ? 'ek_live_0123456789abcdef' : 'tenant-value-1';
  }
  return env;
}

describe('preset pages', () => {
  for (const name of NAMES) {
    it(`${name}: opens with a config that validates as written, with only preset, base_url and auth in the source`, () => {
      const text = page(name);
      const first = /```yaml\n([\s\S]*?)```/.exec(text);
      expect(first, 'a yaml block').not.toBeNull();
      // It opens the page: nothing but the title and one paragraph before it.
      expect(text.indexOf('\n## ')).toBeGreaterThan(first!.index);
      const yaml = first![1]!;
      const config = parseConfig(yaml, `docs/sources/${name}.md`, envFor(yaml));
      expect(config.platform.base_url).toBe('https://tenant.example.com/api');
      expect(config.sources).toHaveLength(1);
      const raw = yaml.slice(yaml.indexOf('sources:'));
      const keys = [...raw.matchAll(/^ {4}([a-z_]+):/gm)].map((m) => m[1]);
      expect(['name', ...keys.filter((k) => k !== 'name')]).toEqual(['name', 'preset', ...((PRESETS[name] as Preset).defaultBaseUrl ? [] : ['base_url']), 'auth']);
      const s = config.sources[0]!;
      if (s.type !== 'hris-json') throw new Error('a preset is an hris-json source');
      expect(s.preset).toBe(name);
    });

    it(`${name}: says how departments are derived and how paging is set`, () => {
      const text = page(name);
      const departments = text.slice(text.indexOf('## Departments'), text.indexOf('## Paging'));
      expect(departments).toContain('`sync.root_department`');
      expect(departments).toContain("tenant's root department");
      const paging = text.slice(text.indexOf('## Paging'), text.indexOf('## Dates and status'));
      expect(paging.length).toBeGreaterThan(40);
    });

    it(`${name}: the field table names every vendor field the preset reads`, () => {
      const text = page(name);
      const table = text.slice(text.indexOf('## Fields'));
      const fields = (PRESETS[name] as Preset).fragment('https://x.example', {}).members as { fields: Record<string, string | string[]> };
      for (const [field, spec] of Object.entries(fields.fields)) {
        const row = new RegExp(`^\\| \`${field}\` \\|(.*)$`, 'm').exec(table);
        expect(row, `${name}: a row for ${field}`).not.toBeNull();
        for (const path of compileField(spec).names) expect(row![1], `${name}.${field}`).toContain(path);
      }
    });
  }

  it('the README and docs/sources/README.md link every preset page', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const sources = readFileSync(join(repoRoot, 'docs', 'sources', 'README.md'), 'utf8');
    for (const name of NAMES) {
      expect(readme).toContain(`(docs/sources/${name}.md)`);
      expect(sources).toContain(`(${name}.md)`);
    }
  });
});
