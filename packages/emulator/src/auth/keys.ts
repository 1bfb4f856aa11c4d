/**
 * The RS256 signing keys: one active key signs, a retiring key is still listed in the key set so that tokens it
 * signed keep verifying until it is removed. Keys live in the area's SQLite tables, so a `--db` file keeps them (and
 * the tokens they signed) across restarts.
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Clock } from '../core/clock.js';
import type { AuthStore } from './store.js';

/** A public key as listed at jwks_uri. */
export interface PublicJwk { kty: 'RSA'; use: 'sig'; alg: 'RS256'; kid: string; n: string; e: string }

/** A loaded key. */
export interface SigningKey {
  kid: string;
  status: 'active' | 'retiring';
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: PublicJwk;
}

/** Why a key could not be removed. */
export type RemoveKeyResult = 'removed' | 'not_found' | 'active';

/** The key ring over the store. */
export class SigningKeys {
  private readonly loaded = new Map<string, SigningKey>();
  private ensuring: Promise<void> | undefined;

  constructor(private readonly store: AuthStore, private readonly clock: Clock) {}

  /**
   * Without keys yet (first use of a fresh store), makes an active and a retiring one (the spec lists both).
   * Called lazily by whatever needs keys, so that an emulator that never signs pays nothing for RSA key generation.
   */
  async ensure(): Promise<void> {
    if (this.store.keys().some((k) => k.status === 'active')) return;
    this.ensuring ??= this.generateInitial().finally(() => {
      this.ensuring = undefined;
    });
    return this.ensuring;
  }

  private async generateInitial(): Promise<void> {
    const [active, retiring] = await Promise.all([newKey(), newKey()]);
    const now = this.clock.now();
    this.store.transaction(() => {
      this.store.addKey(retiring.kid, 'retiring', retiring.privateJwk, now - 1);
      this.store.addKey(active.kid, 'active', active.privateJwk, now);
    });
  }

  /** Every listed key, the active one first. */
  all(): SigningKey[] {
    return this.store.keys()
      .map((row) => {
        const cached = this.loaded.get(row.kid);
        if (cached) return { ...cached, status: row.status };
        const jwk = JSON.parse(row.private_jwk) as JWK;
        const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
        const publicKey = createPublicKey(privateKey);
        const key: SigningKey = {
          kid: row.kid,
          status: row.status,
          privateKey,
          publicKey,
          jwk: { kty: 'RSA', use: 'sig', alg: 'RS256', kid: row.kid, n: jwk.n!, e: jwk.e! },
        };
        this.loaded.set(row.kid, key);
        return key;
      })
      .sort((a, b) => (a.status === b.status ? 0 : a.status === 'active' ? -1 : 1));
  }

  /** The key that signs new tokens (made on first use). */
  async active(): Promise<SigningKey> {
    await this.ensure();
    const key = this.all().find((k) => k.status === 'active');
    if (!key) throw new Error('no active signing key');
    return key;
  }

  /** A listed key by kid (active or retiring). */
  byKid(kid: string): SigningKey | undefined {
    return this.all().find((k) => k.kid === kid);
  }

  /** A new active key; the active key retires and the previous retiring key leaves the set. */
  async rotate(): Promise<SigningKey> {
    await this.ensure();
    const fresh = await newKey();
    this.store.rotateTo(fresh.kid, fresh.privateJwk, this.clock.now());
    return this.active();
  }

  /** Removes a retiring key from the set (tokens it signed stop verifying). The active key cannot be removed. */
  remove(kid: string): RemoveKeyResult {
    const key = this.byKid(kid);
    if (!key) return 'not_found';
    if (key.status === 'active') return 'active';
    this.store.deleteKey(kid);
    this.loaded.delete(kid);
    return 'removed';
  }
}

async function newKey(): Promise<{ kid: string; privateJwk: string }> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n!, e: jwk.e! });
  return { kid, privateJwk: JSON.stringify(jwk) };
}
