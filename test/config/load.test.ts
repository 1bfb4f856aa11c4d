import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, resolveConfigPath } from '../../src/config/load.js';
import { tempDir } from '../helpers/temp.js';

const base = 'platform:\n  base_url: http://127.0.0.1:8080\n';

describe('config loader', () => {
  it('interpolates ${ENV} and records the value as a secret', () => {
    const cfg = parseConfig(`${base}  api_key: \${ORGSYNC_API_KEY}\n`, '/etc/orgsync/c.yaml', { ORGSYNC_API_KEY: 'ek_acme_secretvalue' });
    expect(cfg.platform.api_key).toBe('ek_acme_secretvalue');
    expect(cfg.meta.secrets).toContain('ek_acme_secretvalue');
    expect(cfg.platform.requests_per_second).toBe(100);
  });

  it('names the variable and the path when an env var is missing', () => {
    expect(() => parseConfig(`${base}  api_key: \${NOPE_KEY}\n`, '/c.yaml', {})).toThrow('/c.yaml:3:3: platform.api_key: environment variable NOPE_KEY is not set');
  });

  it('reads *_file secrets relative to the config folder', () => {
    const dir = tempDir('orgsync-cfg-');
    writeFileSync(join(dir, 'key'), 'ek_from_file_123\n');
    writeFileSync(join(dir, 'c.yaml'), `${base}  api_key_file: key\nstate:\n  path: ./var/x.db\n`);
    const cfg = loadConfig(join(dir, 'c.yaml'), {});
    expect(cfg.platform.api_key).toBe('ek_from_file_123');
    expect(resolveConfigPath(cfg, cfg.state.path)).toBe(join(dir, 'var/x.db'));
  });

  it('rejects unknown keys with their path', () => {
    expect(() => parseConfig(`${base}  bogus: 1\n`, '/c.yaml', {})).toThrow('platform.bogus: unknown key');
  });

  it('says "required" for a missing field', () => {
    expect(() => parseConfig('platform: {}\n', '/c.yaml', {})).toThrow('platform.base_url: required');
  });

  it('names the expected type for a wrong one, not "required", and never echoes the value', () => {
    const err = (() => {
      try {
        parseConfig(`${base}  api_key: ek_secret_value\n  requests_per_second: fast\n`, '/c.yaml', {});
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toContain('platform.requests_per_second: Invalid input: expected number, received string');
    expect(err).not.toContain('fast');
    expect(err).not.toContain('ek_secret_value');
  });

  it('reports YAML syntax errors with a line', () => {
    expect(() => parseConfig('platform:\n  base_url: [\n', '/c.yaml', {})).toThrow(/\/c\.yaml:\d+:\d+: invalid YAML/);
  });
});
