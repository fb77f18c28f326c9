import type { AccessTokenInfo } from './token-store.js';

/**
 * Verified access tokens by hash, so checking a bearer token costs no database round trip on the
 * hot path (issue 3). Bounded LRU (Map keeps insertion order; a hit re-inserts). Revocation evicts
 * by grant, by client or by user; a revocation on another node arrives through `evict*` too.
 */
export class TokenCache {
  readonly #entries = new Map<string, AccessTokenInfo>();
  constructor(readonly maxEntries = 50_000) {}

  get(hash: string, now = Date.now()): AccessTokenInfo | undefined {
    const info = this.#entries.get(hash);
    if (!info) return undefined;
    this.#entries.delete(hash);
    if (info.expiresAt <= now) return undefined;
    this.#entries.set(hash, info);
    return info;
  }

  set(hash: string, info: AccessTokenInfo): void {
    this.#entries.delete(hash);
    this.#entries.set(hash, info);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  evictToken(hash: string): void {
    this.#entries.delete(hash);
  }

  evictWhere(match: (info: AccessTokenInfo) => boolean): void {
    for (const [hash, info] of this.#entries) if (match(info)) this.#entries.delete(hash);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
