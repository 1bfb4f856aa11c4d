/**
 * Issue 19 point 1: `platform.api_keys` (each `{key}` or `{key_file}`) and `platform.tenant_requests_per_second`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import { createPlatformClient } from '../../src/platform/client.js';
import { keyFingerprint } from '../../src/platform/key-pool.js';
import { redact } from '../../src/shared/redact.js';
import { tempDir } from '../helpers/temp.js';

const base = 'platform:\n  base_url: http://127.0.0.1:8080\n';

describe('platform.api_keys', () => {
  it('takes keys from the config, the environment and *_file mounts; every one is a secret the redactor hides', () => {
    const dir = tempDir('orgsync-keys-');
    writeFileSync(join(dir, 'k3'), 'ek_keythree_0123456789abcdef\n');
    writeFileSync(
      join(dir, 'c.yaml'),
      `${base}  api_keys:\n    - key: ek_keyone_0123456789abcdef\n    - key: \${SECOND_KEY}\n    - key_file: k3\n  tenant_requests_per_second: 300\n`,
    );
    const cfg = loadConfig(join(dir, 'c.yaml'), { SECOND_KEY: 'ek_keytwo_0123456789abcdef' });
    expect(cfg.platform.api_keys).toEqual([{ key: 'ek_keyone_0123456789abcdef' }, { key: 'ek_keytwo_0123456789abcdef' }, { key: 'ek_keythree_0123456789abcdef' }]);
    expect(cfg.platform.tenant_requests_per_second).toBe(300);
    for (const k of ['ek_keyone_0123456789abcdef', 'ek_keytwo_0123456789abcdef', 'ek_keythree_0123456789abcdef']) {
      expect(cfg.meta.secrets).toContain(k);
      expect(redact(`sent with ${k} and ${JSON.stringify({ key: k })}`)).not.toContain(k);
    }
  });

  it('tenant_requests_per_second defaults to 100; the single api_key stays valid', () => {
    const cfg = parseConfig(`${base}  api_key: ek_single_0123456789abcdef\n`, '/c.yaml', {});
    expect(cfg.platform.tenant_requests_per_second).toBe(100);
    expect(cfg.platform.api_keys).toBeUndefined();
    const client = createPlatformClient(cfg.platform);
    expect(client.activeKeys()).toEqual([keyFingerprint('ek_single_0123456789abcdef')]);
  });

  it('the client uses api_key and every api_keys entry, a key given twice once', async () => {
    const cfg = parseConfig(`${base}  api_key: ek_a_0123456789abcdef\n  api_keys:\n    - key: ek_b_0123456789abcdef\n    - key: ek_a_0123456789abcdef\n`, '/c.yaml', {});
    const client = createPlatformClient(cfg.platform);
    expect(client.activeKeys()).toEqual([keyFingerprint('ek_a_0123456789abcdef'), keyFingerprint('ek_b_0123456789abcdef')]);
    await client.close();
  });

  it('an entry needs key or key_file, not both, and nothing else; an unreadable key_file names its path', () => {
    expect(() => parseConfig(`${base}  api_keys:\n    - {}\n`, '/c.yaml', {})).toThrow('platform.api_keys[0].key: required');
    expect(() => parseConfig(`${base}  api_keys:\n    - key: ek_a_0123456789abcdef\n      name: x\n`, '/c.yaml', {})).toThrow('platform.api_keys[0].name: unknown key');
    expect(() => parseConfig(`${base}  api_keys:\n    - key: ek_a_0123456789abcdef\n      key_file: /k\n`, '/c.yaml', {})).toThrow(
      'platform.api_keys[0].key_file: give either key or key_file, not both',
    );
    expect(() => parseConfig(`${base}  api_keys: []\n`, '/c.yaml', {})).toThrow('platform.api_keys');
    const err = (() => {
      try {
        parseConfig(`${base}  api_keys:\n    - key_file: /nonexistent/orgsync-key\n`, '/c.yaml', {});
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toContain('platform.api_keys[0].key_file: cannot read secret file /nonexistent/orgsync-key: ENOENT');
  });

  it('commands that never call the platform leave api_keys out (no key_file is read)', () => {
    const cfg = parseConfig(`${base}  api_keys:\n    - key_file: /nonexistent/orgsync-key\n`, '/c.yaml', {}, { platformSecrets: false });
    expect(cfg.platform.api_keys).toBeUndefined();
  });

  it('the JSON Schema (and so the chart\'s values.schema.json) accepts key or key_file per entry', () => {
    const schema = configJsonSchema() as { properties: { platform: { properties: Record<string, { items?: Record<string, unknown> }> } } };
    const item = schema.properties.platform.properties.api_keys!.items!;
    expect(Object.keys(item.properties as object).sort()).toEqual(['key', 'key_file']);
    expect(item.oneOf).toEqual([{ required: ['key'] }, { required: ['key_file'] }]);
    expect(schema.properties.platform.properties.tenant_requests_per_second).toMatchObject({ type: 'number', default: 100 });
  });
});
