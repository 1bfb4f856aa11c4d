/**
 * Issue 30 point 4: every default lives in the zod schema and durations are parsed once, at the config boundary. The
 * loaded config carries milliseconds and complete blocks, whatever the file leaves out; the JSON Schema still
 * describes the file (durations as strings).
 */
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { parseConfig } from '../../src/config/load.js';

const base = 'platform:\n  base_url: http://127.0.0.1:8080\n  api_key: ek_test\n';

describe('defaults and durations at the config boundary', () => {
  it('a config with only the platform block loads complete, with durations in milliseconds', () => {
    const cfg = parseConfig(base, '/c.yaml', {});
    expect(cfg.state).toEqual({ path: './var/orgsync.db', mirror_overlap_seconds: 120, full_walk_every: 24 * 3_600_000, busy_timeout: 10_000, lease_ttl: 60_000, history_days: 90 });
    expect(cfg.shutdown_timeout).toBe(20_000);
    expect(cfg.sync.delete_threshold).toEqual({ max_count: 500, max_percent: 20 });
    expect(cfg.sync.adopt).toEqual({ members: [], departments: [], positions: [] });
    expect(cfg.sync.member_removal).toBe('left');
    expect(cfg.sync.max_failures).toBe(100);
    expect(cfg.sync.removal_grace).toEqual({ kind: 'none' });
    expect(cfg.sync.lifecycle).toEqual({ create_days_before_start: 0, end_action: 'remove' });
    expect(cfg.metrics).toEqual({ listen: '0.0.0.0:9464', pushgateway_url: '' });
    expect(cfg.daemon).toEqual({ trigger_token_file: '', read_token_file: '' });
    expect(cfg.log).toEqual({ level: 'info', format: 'auto', redact: [], personal_data: false });
    expect(cfg.platform).toMatchObject({ requests_per_second: 100, concurrency: 8, timeout_ms: 30_000, max_attempts: 6, max_retry_time_ms: 120_000 });
  });

  it('a block given in part keeps the defaults of the keys it leaves out', () => {
    const cfg = parseConfig(`${base}sync:\n  delete_threshold: { max_count: 7 }\n  member_removal: suspended\nstate:\n  busy_timeout: 1m30s\n`, '/c.yaml', {});
    expect(cfg.sync.delete_threshold).toEqual({ max_count: 7, max_percent: 20 });
    expect(cfg.sync.id).toBe('orgsync');
    // lifecycle.end_action follows member_removal when not given.
    expect(cfg.sync.lifecycle.end_action).toBe('suspend');
    expect(cfg.state.busy_timeout).toBe(90_000);
    expect(cfg.state.full_walk_every).toBe(24 * 3_600_000);
  });

  it('written durations become milliseconds; removal_grace keeps its text for messages', () => {
    const cfg = parseConfig(`${base}state:\n  full_walk_every: 90m\n  lease_ttl: 2m\nshutdown_timeout: 500ms\nsync:\n  removal_grace: 72h\n`, '/c.yaml', {});
    expect(cfg.state.full_walk_every).toBe(5_400_000);
    expect(cfg.state.lease_ttl).toBe(120_000);
    expect(cfg.shutdown_timeout).toBe(500);
    expect(cfg.sync.removal_grace).toEqual({ kind: 'duration', ms: 72 * 3_600_000, text: '72h' });
    expect(parseConfig(`${base}sync:\n  removal_grace: { runs: 3 }\n`, '/c.yaml', {}).sync.removal_grace).toEqual({ kind: 'runs', runs: 3 });
    expect(parseConfig(`${base}sync:\n  removal_grace: "0"\n`, '/c.yaml', {}).sync.removal_grace).toEqual({ kind: 'none' });
  });

  it('a bad duration is an error naming the key and the expected form', () => {
    expect(() => parseConfig(`${base}state:\n  full_walk_every: soon\n`, '/c.yaml', {})).toThrow('state.full_walk_every: expected a duration such as 24h, 90m, 1h30m or 3600s');
    expect(() => parseConfig(`${base}state:\n  lease_ttl: 2s\n`, '/c.yaml', {})).toThrow('state.lease_ttl: expected a duration of at least 3s, such as 60s or 2m');
    expect(() => parseConfig(`${base}shutdown_timeout: 0s\n`, '/c.yaml', {})).toThrow('shutdown_timeout: expected a duration such as 20s, 500ms or 1m');
    expect(() => parseConfig(`${base}sync:\n  removal_grace: 7x\n`, '/c.yaml', {})).toThrow('sync.removal_grace: expected 0, a duration such as 30m, 72h or 7d, or { runs: N }');
  });

  it('the JSON Schema describes the file: durations are strings with their written defaults', () => {
    const schema = configJsonSchema() as { properties: Record<string, { properties?: Record<string, { type?: string; default?: unknown }>; type?: string; default?: unknown }> };
    expect(schema.properties.state!.properties!.full_walk_every).toMatchObject({ type: 'string', default: '24h' });
    expect(schema.properties.state!.properties!.busy_timeout).toMatchObject({ type: 'string', default: '10s' });
    expect(schema.properties.shutdown_timeout).toMatchObject({ type: 'string', default: '20s' });
    expect(schema.properties.sync!.properties!.delete_threshold).toMatchObject({ default: {} });
  });
});
