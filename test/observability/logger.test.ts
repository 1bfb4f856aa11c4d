import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED, Redactor, wantsPretty } from '../../src/observability/logger.js';

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { stream, lines };
}

describe('logger', () => {
  it('writes JSON lines with level names, time and the bound run_id on every line of a child', () => {
    const { stream, lines } = sink();
    const log = createLogger({ level: 'info', destination: stream, pretty: false, secrets: [], redactPaths: [] });
    const run = log.child({ run_id: 'r-1' });
    run.info({ entity: 'member', count: 3 }, 'planned removals');
    run.debug({}, 'not written at info');
    run.warn({ x: 1 }, 'careful');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({ level: 'info', run_id: 'r-1', entity: 'member', count: 3, msg: 'planned removals' });
    expect(typeof first.time).toBe('string');
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 'warn', run_id: 'r-1' });
  });

  it('redacts secret fields at any depth, bearer headers, platform keys and configured secret values', () => {
    const { stream, lines } = sink();
    const secrets = ['hunter2-the-password', 'file-secret "quoted" \\ value', 'hris-token-abcdef'];
    const log = createLogger({ level: 'trace', destination: stream, pretty: false, secrets, redactPaths: ['source.custom'] });
    log.info({ platform: { api_key: 'ek_acme_0123456789abcdef' } }, 'config');
    log.info({ deep: { er: { password: 'p@ss-w0rd-xyz' } } }, 'nested');
    log.info({ headers: { Authorization: 'Bearer abc.def.ghi' } }, 'request');
    log.info({ source: { custom: 'do-not-show-me' } }, 'custom path');
    log.info({}, 'key in a message: ek_acme_0123456789abcdef and st_0123456789abcdef');
    log.error({ err: new Error('bind failed for hunter2-the-password') }, 'ldap');
    log.warn({ note: 'read file-secret "quoted" \\ value and hris-token-abcdef' }, 'values');
    log.info({ token: 12345678 }, 'numeric token');
    log.info({ curl: 'curl -H "Authorization: Bearer abc.def.ghi" https://x' }, 'header in text');
    const all = lines.join('\n');
    for (const s of ['ek_acme_0123456789abcdef', 'st_0123456789abcdef', 'p@ss-w0rd-xyz', 'abc.def.ghi', 'do-not-show-me', 'hunter2-the-password', 'file-secret', 'hris-token-abcdef', '12345678']) {
      expect(all).not.toContain(s);
    }
    expect(all).toContain(REDACTED);
    expect(all).toContain('Bearer [redacted]');
    // Every line is still valid JSON after redaction.
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });

  it('Redactor leaves ordinary text alone and ignores too-short "secrets"', () => {
    const r = new Redactor(['x', 'ab']);
    expect(r.redact('{"msg":"first_name ok","dept":"Engineering"}')).toBe('{"msg":"first_name ok","dept":"Engineering"}');
  });

  it('pretty output is readable text, still redacted', () => {
    const { stream, lines } = sink();
    const log = createLogger({ level: 'info', destination: stream, pretty: true, secrets: ['supersecretvalue'], redactPaths: [] });
    log.child({ run_id: 'r-2' }).info({ key: 'supersecretvalue' }, 'run started');
    const text = lines.join('\n');
    expect(text).toContain('INFO');
    expect(text).toContain('run started');
    expect(text).toContain('r-2');
    expect(text).not.toContain('supersecretvalue');
    expect(() => JSON.parse(lines[0]!) as unknown).toThrow();
  });

  it('chooses pretty output only on a terminal when the format is auto', () => {
    expect(wantsPretty('auto', true)).toBe(true);
    expect(wantsPretty('auto', false)).toBe(false);
    expect(wantsPretty('json', true)).toBe(false);
    expect(wantsPretty('pretty', false)).toBe(true);
  });
});
