import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Queues a publication. Call it with the transaction that makes the change, so the event exists
 * if and only if the change committed (DESIGN: transactional outbox).
 */
export async function enqueueEvent(tx: Kysely<DB>, channel: string, payload: unknown): Promise<void> {
  await tx.insertInto('outbox').values({ channel, payload: JSON.stringify(payload), created_at: Date.now() }).execute();
}

/** Rows not yet published and when the oldest was written (metrics: a growing age means stuck events). */
export async function outboxBacklog(db: Kysely<DB>): Promise<{ backlog: number; oldestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('backlog'), eb.fn.min('created_at').as('oldest')])
    .where('published_at', 'is', null)
    .executeTakeFirst();
  return { backlog: Number(row?.backlog ?? 0), oldestCreatedAt: row?.oldest == null ? null : Number(row.oldest) };
}
