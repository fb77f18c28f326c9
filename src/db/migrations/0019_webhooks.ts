import { sql, type Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

/**
 * Webhooks (issue 11): applications subscribe for a streamer who authorized them; every outbox event
 * a subscription wants becomes one delivery row in its queue, delivered in order, retried, logged.
 *
 * - webhook_subscriptions: the endpoint, its events, its signing secret (sealed; the previous one
 *   while a rotation overlaps), its state, and the lease of the node delivering its queue.
 * - webhook_deliveries: one message to one subscription (the signed body and its `webhook-id`).
 * - webhook_attempts: the log of each HTTP attempt.
 * - outbox.webhooks_at: when the fan-out turned the event into deliveries. Rows already in the
 *   outbox count as done: events from before webhooks existed are never delivered.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  await withId(db.schema.createTable('webhook_subscriptions'), dialect)
    .addColumn('app_id', 'bigint', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('status_at', 'bigint')
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_subscriptions_owner').on('webhook_subscriptions').columns(['user_id', 'app_id']).execute();
  await db.schema.createIndex('webhook_subscriptions_due').on('webhook_subscriptions').columns(['status', 'next_attempt_at']).execute();

  await withId(db.schema.createTable('webhook_deliveries'), dialect)
    .addColumn('subscription_id', 'bigint', (c) => c.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_deliveries_queue').on('webhook_deliveries').columns(['subscription_id', 'status', 'id']).execute();

  await withId(db.schema.createTable('webhook_attempts'), dialect)
    .addColumn('delivery_id', 'bigint', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'id']).execute();

  await db.schema.alterTable('outbox').addColumn('webhooks_at', 'bigint').execute();
  await sql`update outbox set webhooks_at = created_at`.execute(db);
  // Partial index: the fan-out reads only the few rows it has not handled yet.
  await sql`create index outbox_webhooks_pending on outbox (id) where webhooks_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_webhooks_pending').execute();
  await db.schema.alterTable('outbox').dropColumn('webhooks_at').execute();
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_subscriptions').execute();
}
