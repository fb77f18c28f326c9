import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.js';

/**
 * Serialized read responses, each valid only while the database is unchanged since it was built.
 *
 * SQLite only. The stamp is `PRAGMA data_version` (changes when another connection — the CLI, a
 * second process — commits; SQLite documents it for exactly this kind of cache) plus
 * `total_changes()` (every row this process's own connection has written). Any committed write
 * anywhere therefore invalidates every entry: coarse, but exact, and both values cost no table
 * read. On PostgreSQL there is no such stamp, so nothing is cached there.
 *
 * Contract for callers: read the stamp before running the queries that build the entry, so a write
 * racing with them is seen as a change at the next lookup.
 */
/** Diagnostics switch (bench/http.ts measures the uncached query path with it); on in production. */
export const readCacheSwitch = { enabled: true };

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

/** The change stamp of a SQLite database, or null where none exists (PostgreSQL). */
export async function changeStamp(database: Pick<Database, 'dialect'>, db: Kysely<any>): Promise<string | null> {
  if (database.dialect !== 'sqlite') return null;
  const { rows } = await sql<{ v: number; c: number }>`select (select data_version from pragma_data_version) as v, total_changes() as c`.execute(db);
  const row = rows[0];
  return row ? `${row.v}:${row.c}` : null;
}
