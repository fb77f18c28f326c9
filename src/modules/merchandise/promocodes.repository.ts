import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** Stores a streamer's merchandise promocode (already normalized); the unique index decides races. */
export async function updatePromocode(db: Kysely<DB>, userId: number, code: string): Promise<void> {
  await db.updateTable('users').set({ merchandise_promocode: code, updated_at: Date.now() }).where('id', '=', userId).execute();
}
