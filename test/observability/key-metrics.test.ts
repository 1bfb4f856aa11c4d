/** Issue 19 point 1: each API key's requests, 429s and drops are metrics labelled by its fingerprint, with sync_id. */
import { describe, expect, it } from 'vitest';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { keyFingerprint } from '../../src/platform/key-pool.js';

describe('per-key platform metrics', () => {
  it('count requests, 429s and drops per key fingerprint, never the key', async () => {
    const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false, syncId: 'hr-sync' });
    const observer = metrics.clientObserver();
    const a = keyFingerprint('ek_keya_0123456789abcdef');
    const b = keyFingerprint('ek_keyb_0123456789abcdef');
    observer.onKeyRequest(a);
    observer.onKeyRequest(a);
    observer.onKeyRequest(b);
    observer.onKeyRateLimited(b);
    observer.onKeyDropped(b);
    const text = await metrics.text();
    expect(text).toContain(`orgsync_platform_key_requests_total{key="${a}",sync_id="hr-sync"} 2`);
    expect(text).toContain(`orgsync_platform_key_requests_total{key="${b}",sync_id="hr-sync"} 1`);
    expect(text).toContain(`orgsync_platform_key_rate_limited_total{key="${b}",sync_id="hr-sync"} 1`);
    expect(text).toContain(`orgsync_platform_key_dropped_total{key="${b}",sync_id="hr-sync"} 1`);
    expect(text).not.toContain('ek_key');
  });
});
