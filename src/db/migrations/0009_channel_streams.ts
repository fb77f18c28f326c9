import type { Kysely } from 'kysely';

/**
 * Channel history of the single-node (in-memory) broker, kept in the database so a restart keeps
 * every channel's epoch and offsets and subscribers recover what they missed:
 * - outbox.offsets: JSON array of the offset each channel of the event got, in `channels` order;
 * - channel_streams: each channel's epoch and last offset (they outlive the outbox rows).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('offsets', 'text').execute();
  await db.schema
    .createTable('channel_streams')
    .addColumn('channel', 'text', (c) => c.primaryKey())
    .addColumn('epoch', 'text', (c) => c.notNull())
    .addColumn('top_offset', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outbox_published_at').on('outbox').column('published_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_published_at').execute();
  await db.schema.dropTable('channel_streams').execute();
  await db.schema.alterTable('outbox').dropColumn('offsets').execute();
}
