/**
 * Issue 32 point 2: every config error names the file's line:column of the offending key, suggests the nearest known
 * key for an unknown one, and reads the same in every command: one line per problem, in `config validate`, `plan` and
 * `sync` alike (exit 2, nothing else printed).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { nearestKey } from '../../src/config/zod-errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const COMMANDS = [['config', 'validate'], ['plan'], ['sync']] as const;

/** Writes `text` as my-sync.yaml in a new folder (with the CSV it names) and returns its path. */
function configFile(text: string): string {
  const dir = tempDir('orgsync-cfgerr-');
  writeFileSync(join(dir, 'm.csv'), 'id,name\nu1,Ann Lee\n');
  const file = join(dir, 'my-sync.yaml');
  writeFileSync(file, text);
  return file;
}


/** Runs every command on `file` and expects exit 2 and exactly `lines` on stderr from each. */
async function expectEveryCommand(file: string, lines: string[]): Promise<void> {
  for (const command of COMMANDS) {
    const r = await runCli([...command, '--config', file]);
    expect({ command: command.join(' '), code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({
      command: command.join(' '),
      code: 2,
      stderr: lines.map((l) => `orgsync: ${l}\n`).join(''),
      stdout: '',
    });
  }
}

const HEAD = 'platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_acme_0123456789abcdef\nstate:\n  path: ./state.db\nlog:\n  level: silent\n';

describe('config errors, the same in every command', () => {
  it('a misspelt key: its line and column, and the key it was meant to be', async () => {
    const file = configFile(`${HEAD}sources:\n  - name: hr\n    type: csv\n    members:\n      file: m.csv\n      fileds: { id: id, display_name: name }\n`);
    await expectEveryCommand(file, [
      `${file}:11:5: sources[0].members.fields: required`,
      `${file}:13:7: sources[0].members.fileds: unknown key; did you mean \`fields\`?`,
    ]);
  });

  it('a value of the wrong type: the line and column of its key', async () => {
    const file = configFile(`${HEAD}sync:\n  id: hr-sync\n  max_failures: many\nsources: []\n`);
    await expectEveryCommand(file, [`${file}:10:3: sync.max_failures: Invalid input: expected number, received string`]);
  });

  it('a missing required key: the line and column of the block that lacks it', async () => {
    const file = configFile(`${HEAD}sources:\n  - name: dir\n    type: ldap\n    url: ldap://127.0.0.1:1\n`);
    await expectEveryCommand(file, [`${file}:9:5: sources[0].base_dn: required`]);
  });

  it('several problems: one line each, in the order of the file', async () => {
    const file = configFile(
      'platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_acme_0123456789abcdef\n  requests_per_secnd: 5\nsources:\n  - name: hr\n    type: csv\n    delimiter: 7\n    members: { file: m.csv, fields: { id: id, display_name: name, emial: mail } }\n',
    );
    await expectEveryCommand(file, [
      `${file}:4:3: platform.requests_per_secnd: unknown key; did you mean \`requests_per_second\`?`,
      `${file}:8:5: sources[0].delimiter: Invalid input: expected string, received number`,
      `${file}:9:67: sources[0].members.fields.emial: unknown key; did you mean \`email\`?`,
    ]);
  });
});

describe('where a config error points', () => {
  const problems = (text: string): string[] => {
    try {
      parseConfig(text, '/etc/orgsync/c.yaml', {});
    } catch (err) {
      return (err as { details: { issues: string[] } }).details.issues;
    }
    return [];
  };

  it('into flow mappings and list items; an unknown key far from any known one gets no suggestion', () => {
    expect(problems(`${HEAD}sources: []\nsync:\n  adopt: { members: [email, fax] }\n  colour: blue\n`)).toEqual([
      '/etc/orgsync/c.yaml:10:29: sync.adopt.members[1]: Invalid option: expected one of "email"|"phone"',
      '/etc/orgsync/c.yaml:11:3: sync.colour: unknown key',
    ]);
  });

  it('through an alias, to where its anchor wrote the value', () => {
    expect(problems(`${HEAD}sources: []\nsync:\n  adopt:\n    members: &contact [email, fax]\n    positions: *contact\n`)).toEqual([
      '/etc/orgsync/c.yaml:11:31: sync.adopt.members[1]: Invalid option: expected one of "email"|"phone"',
      '/etc/orgsync/c.yaml:11:24: sync.adopt.positions[0]: Invalid option: expected one of "third_id"|"name"',
      '/etc/orgsync/c.yaml:11:31: sync.adopt.positions[1]: Invalid option: expected one of "third_id"|"name"',
    ]);
  });

  it('an unset variable and a secret given twice name their line and column too', () => {
    expect(() => parseConfig('platform:\n  base_url: http://x\n  api_key: ${NOPE}\n', '/c.yaml', {})).toThrow(/^\/c\.yaml:3:3: platform\.api_key: environment variable NOPE is not set$/);
    expect(() => parseConfig('platform:\n  base_url: http://x\n  api_key: a\n  api_key_file: k\n', '/c.yaml', {})).toThrow(
      /^\/c\.yaml:4:3: platform\.api_key_file: give either api_key or api_key_file, not both$/,
    );
  });

  it('the nearest key: swaps and slips of one or two letters, nothing for a word of its own', () => {
    const fields = ['id', 'display_name', 'email', 'phone', 'title', 'department', 'department_path', 'status'];
    expect(nearestKey('emial', fields)).toBe('email');
    expect(nearestKey('departmnet', fields)).toBe('department');
    expect(nearestKey('Status', fields)).toBe('status');
    expect(nearestKey('manager', fields)).toBeUndefined();
    expect(nearestKey('ip', ['id', 'if'])).toBe('id');
  });
});
