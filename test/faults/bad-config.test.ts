/**
 * Issue 21 point 7 (YAML): a config that is an alias bomb, too large, or nested past the parser's depth is a config
 * error — exit 2 with one line naming the file — never an internal error, and it is refused before it costs memory.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_LIMITS } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const VALID = `platform:
  base_url: http://127.0.0.1:1
  api_key: ek_test_0123456789
sync:
  id: bad-config
sources:
  - name: hr
    type: csv
    members: { file: members.csv, fields: { id: id, display_name: name, email: email } }
`;

/** A "billion laughs": ten levels of ten aliases each, 10^10 strings once expanded. */
function aliasBomb(): string {
  const lines = ['x0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i <= 10; i++) lines.push(`x${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(',')}]`);
  return `${VALID}${lines.join('\n')}\nbomb: *l10\n`;
}

describe('bad YAML configs are config errors (exit 2, the file named)', () => {
  const dir = tempDir('orgsync-bad-config-');
  // `config validate` reads every file a config names.
  writeFileSync(join(dir, 'members.csv'), 'id,name,email\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function validate(name: string, text: string) {
    const file = join(dir, name);
    writeFileSync(file, text);
    const { code, stderr } = await runCli(['config', 'validate', '--config', file]);
    return { code, stderr, file };
  }

  it('an alias bomb: exit 2, naming the file and the limit, quickly', async () => {
    const started = performance.now();
    const r = await validate('bomb.yaml', aliasBomb());
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `orgsync: ${r.file}: invalid YAML: its aliases (*name) expand more than ${CONFIG_LIMITS.maxAliasCount} times, as an alias bomb does; write the values out instead of aliasing aliases\n`,
    );
    // Refused by the yaml package's count, not after expanding: far below what 10^10 strings would take.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('a few ordinary aliases are still fine', async () => {
    const twoSources = VALID.replace('    members: {', '    members: &members {') + '  - name: hr2\n    type: csv\n    members: *members\n';
    const r = await validate('aliases.yaml', twoSources);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('an alias to no anchor: exit 2 with the line', async () => {
    const r = await validate('unresolved.yaml', `${VALID}log: *nowhere\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^orgsync: ${r.file.replace(/[.]/g, '\\.')}(:\\d+:\\d+)?: invalid YAML: .*nowhere`));
  });

  it('a document larger than the limit: exit 2 naming the file, its size and the limit, without parsing it', async () => {
    const text = `${VALID}# ${'x'.repeat(CONFIG_LIMITS.maxBytes)}\n`;
    const r = await validate('huge.yaml', text);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `orgsync: ${r.file}: the config file is ${Buffer.byteLength(text)} bytes, more than the ${CONFIG_LIMITS.maxBytes} a config may have; is it the right file?\n`,
    );
  });

  it('nesting past the parser\'s depth: exit 2 with line and column', async () => {
    const r = await validate('deep.yaml', `${VALID}deep: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^orgsync: ${r.file.replace(/[.]/g, '\\.')}:\\d+:\\d+: invalid YAML: `));
    expect(r.stderr.split('\n')).toHaveLength(2);
  });
});
