import { sql, type Kysely } from 'kysely';

/**
 * One body per event instead of a copy per subscription (issue 11, the dispatcher's PostgreSQL
 * writes). Every delivery of an event (and every manual redelivery of it) sends the same signed
 * body under the same `webhook-id`; it was stored once per delivery row, and rewritten with the row
 * when the delivery was marked delivered (an update that changes indexed columns copies the whole
 * row). Now `webhook_messages` holds it once, keyed by the `webhook-id`; deliveries refer to it by
 * their `message_id`, and the log's pruning deletes a message once no delivery refers to it
 * (index webhook_deliveries_message; `created_at` finds the old ones).
 *
 * The pruning's index on `finished_at` (0023) becomes partial, finished deliveries only: a delivery
 * is written pending (finished_at null) and its insert no longer adds an entry there.
 *
 * Existing deliveries keep their messages: the bodies of one `message_id` are the same (the fan-out
 * built one per event, a redelivery copied it), so one of them is kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_messages')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into webhook_messages (message_id, body, created_at)
    select message_id, min(body), min(created_at) from webhook_deliveries group by message_id`.execute(db);
  await db.schema.createIndex('webhook_messages_created').on('webhook_messages').column('created_at').execute();
  await db.schema.createIndex('webhook_deliveries_message').on('webhook_deliveries').column('message_id').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('body').execute();
  await db.schema.dropIndex('webhook_deliveries_finished').execute();
  await sql`create index webhook_deliveries_finished on webhook_deliveries (finished_at) where finished_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_finished').execute();
  await db.schema.createIndex('webhook_deliveries_finished').on('webhook_deliveries').column('finished_at').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('body', 'text', (c) => c.notNull().defaultTo('')).execute();
  await sql`update webhook_deliveries set body = (select m.body from webhook_messages m where m.message_id = webhook_deliveries.message_id)`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_message').execute();
  await db.schema.dropTable('webhook_messages').execute();
}
