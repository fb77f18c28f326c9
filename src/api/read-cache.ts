/** Diagnostics switch (bench/http.ts measures the uncached query path with it); on in production. */
export const readCacheSwitch = { enabled: true };

/**
 * Serialized read responses, each valid only while the stamp it was built at is unchanged.
 *
 * The caller chooses the stamp: it must change in the same transaction as every write the entry
 * depends on, and be read in the same statement (or snapshot) as the data — then an entry built
 * from data a write has since changed carries an older stamp and is never served again. The
 * donations page uses its streamer's counter version (migration 0015, kept by triggers), which
 * works across processes and nodes on both dialects because it lives in the database.
 */
export class StampedCache {
  readonly #entries = new Map<string, { stamp: string; body: string }>();
  constructor(private readonly maxEntries = 2000) {}

  get(key: string, stamp: string): string | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.stamp !== stamp) return undefined;
    this.#entries.set(key, entry); // most recently used last
    return entry.body;
  }

  set(key: string, stamp: string, body: string): void {
    this.#entries.delete(key);
    this.#entries.set(key, { stamp, body });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
