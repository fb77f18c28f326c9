import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Queues a publication. Call it with the transaction that makes the change, so the event exists
 * if and only if the change committed (DESIGN: transactional outbox).
 */
export async function enqueueEvent(tx: Kysely<DB>, channel: string, payload: unknown): Promise<void> {
  await tx.insertInto('outbox').values({ channel, payload: JSON.stringify(payload), created_at: Date.now() }).execute();
}
