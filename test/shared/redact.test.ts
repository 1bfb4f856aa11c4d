import { describe, expect, it } from 'vitest';
import { OrgsyncError } from '../../src/shared/errors.js';
import { REDACTED, redact, redactSecrets, redactUrl, redactValue, registerPagingParams, registerSecrets } from '../../src/shared/redact.js';

describe('the shared redactor', () => {
  it('replaces URL userinfo and every query value, keeping scheme, host, path, names and fragment', () => {
    expect(redactUrl('https://hr.example/api/people?access_token=abc123&page=2')).toBe('https://hr.example/api/people?access_token=[redacted]&page=[redacted]');
    expect(redactUrl(new URL('https://svc:pa55w0rd@hr.example:8443/x?k=v#$.data[3]'))).toBe('https://[redacted]@hr.example:8443/x?k=[redacted]#$.data[3]');
    expect(redactUrl('https://hr.example/x?bare')).toBe('https://hr.example/x?[redacted]');
    expect(redactUrl('https://hr.example/x')).toBe('https://hr.example/x');
    expect(redactUrl('not a url ?x=1')).toBe('not a url ?x=1');
    // Idempotent: a redacted URL stays as it is.
    expect(redactUrl(redactUrl('https://u:p@h/x?a=1'))).toBe('https://[redacted]@h/x?a=[redacted]');
  });

  it('finds URLs inside messages and JSON lines', () => {
    expect(redact('GET https://hr.example/p?cursor=Zz9&access_token=t0k3n answered HTTP 500')).toBe(
      'GET https://hr.example/p?cursor=[redacted]&access_token=[redacted] answered HTTP 500',
    );
    expect(JSON.parse(redact('{"msg":"x","url":"ldap://cn=admin:pw@ldap.local/ou=x?sub"}'))).toEqual({ msg: 'x', url: 'ldap://[redacted]@ldap.local/ou=x?[redacted]' });
  });

  it('replaces registered secret values as is, JSON-escaped and URL-encoded; ignores values shorter than 4', () => {
    registerSecrets(['s3cr3t "q"/+ value', 'ab']);
    expect(redactSecrets('a s3cr3t "q"/+ value b')).toBe(`a ${REDACTED} b`);
    expect(redactSecrets(JSON.stringify({ v: 'x s3cr3t "q"/+ value' }))).toBe(`{"v":"x ${REDACTED}"}`);
    expect(redactSecrets(`p=${encodeURIComponent('s3cr3t "q"/+ value')}`)).toBe(`p=${REDACTED}`);
    expect(redactSecrets(`p=${new URLSearchParams({ s: 's3cr3t "q"/+ value' }).toString().slice(2)}`)).toBe(`p=${REDACTED}`);
    expect(redactSecrets('tab stays')).toBe('tab stays');
    // redactSecrets leaves URLs of data alone; redact does not.
    expect(redactSecrets('https://x/a?v=2')).toBe('https://x/a?v=2');
    expect(redact('https://x/a?v=2')).toBe('https://x/a?v=[redacted]');
  });

  it('redacts credentials by shape and JSON fields named like secrets', () => {
    expect(redact('Authorization: Bearer abc.def.ghi, key ek_acme_0123456789')).toBe('Authorization: Bearer [redacted], key [redacted]');
    expect(redact('{"password":"pw-1234","n":1}')).toBe('{"password":"[redacted]","n":1}');
  });

  it('redactValue walks a JSON-able value and never changes the input', () => {
    registerSecrets(['canary-value-123']);
    const input = { runs: [{ error: 'GET https://h/x?t=canary-value-123 failed', ok: true, n: 3 }], headers: { Authorization: 'x' }, when: null };
    const out = redactValue(input);
    expect(out).toEqual({ runs: [{ error: 'GET https://h/x?t=[redacted] failed', ok: true, n: 3 }], headers: { Authorization: '[redacted]' }, when: null });
    expect(input.runs[0]!.error).toContain('canary-value-123');
  });

  it('an OrgsyncError never carries a registered secret or a query value in its message', () => {
    registerSecrets(['another-canary-456']);
    const err = new OrgsyncError('SOURCE_UNREADABLE', 'source hr: GET https://h/p?access_token=zzz failed with another-canary-456');
    expect(err.message).toBe('source hr: GET https://h/p?access_token=[redacted] failed with [redacted]');
  });
});

describe('URLs in running text', () => {
  it('end before trailing punctuation', () => {
    expect(redact('page https://h/p?p=1: malformed JSON')).toBe('page https://h/p?p=[redacted]: malformed JSON');
    expect(redact('(see https://h/p?p=1).')).toBe('(see https://h/p?p=[redacted]).');
  });
});

describe('which values from the environment become secrets (config load)', () => {
  it('secret keys and headers always; elsewhere values of 8+ characters, but of a URL only its userinfo and query, and never a path', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const env = {
      URL: 'https://svc:url-pass-1@hr.example/api?key=url-query-key',
      STATE: '/var/lib/orgsync/state.db',
      KEY: 'ek_k3y',
      SYNC: 'sync-id-long-enough',
      TOKEN: 'tok1',
    };
    const cfg = parseConfig(
      `platform:
  base_url: \${URL}
  api_key: \${KEY}
state:
  path: \${STATE}
sync:
  id: \${SYNC}
sources:
  - name: hris
    type: hris-json
    headers: { X-Token: "\${TOKEN}" }
    members: { url: "\${URL}", fields: { id: id, display_name: name, email: email } }
`,
      '/tmp/orgsync-none/orgsync.yaml',
      env,
    );
    expect([...cfg.meta.secrets].sort()).toEqual(['ek_k3y', 'sync-id-long-enough', 'tok1', 'url-pass-1', 'url-query-key']);
    // So a message can still name the state DB and the platform, never the credentials in the URL.
    expect(redact(`state DB ${env.STATE} at ${env.URL}`)).toBe('state DB /var/lib/orgsync/state.db at https://[redacted]@hr.example/api?key=[redacted]');
  });
});

describe('paging positions (issue 45)', () => {
  // Last in this file: the registry is process-wide and only grows.
  it('shows the values of registered paging parameters, %-encoded or not, with secrets still replaced', () => {
    registerSecrets(['canary-cursor-789']);
    registerPagingParams(['$skip', 'cursor']);
    expect(redactUrl('https://h/w?%24skip=100&%24top=50')).toBe('https://h/w?%24skip=100&%24top=[redacted]');
    expect(redact('GET https://h/w?$skip=100&access_token=abc failed')).toBe('GET https://h/w?$skip=100&access_token=[redacted] failed');
    expect(redactUrl('https://h/w?cursor=canary-cursor-789')).toBe('https://h/w?cursor=[redacted]');
  });

  it('names learned from page URLs that look like credentials are never shown', () => {
    registerPagingParams(['pageNumber', 'access_token', 'sig', 'session_id', 'apiKey'], true);
    expect(redactUrl('https://h/w?pageNumber=3&access_token=t&sig=s&session_id=x&apiKey=k')).toBe('https://h/w?pageNumber=3&access_token=[redacted]&sig=[redacted]&session_id=[redacted]&apiKey=[redacted]');
  });
});
