import type { Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

/**
 * Payment providers (issue 12):
 * - payment_settings: per streamer and provider, whether it is on and the streamer's own
 *   credentials for it (a JSON object sealed with the app's encryption key);
 * - pending_donations: what a donor asked to give before leaving for a hosted checkout; `ref` is
 *   the random reference the provider echoes back (YooMoney `label`, Stripe `client_reference_id`);
 * - provider_payments: one row per confirmed provider payment. Its unique (provider, payment_id)
 *   is what makes a retried or replayed notification record nothing twice: concurrent deliveries
 *   meet at the constraint, not at a read.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  await db.schema
    .createTable('payment_settings')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credentials_sealed', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('payment_settings_pk', ['user_id', 'provider'])
    .execute();

  await withId(db.schema.createTable('pending_donations'), dialect)
    .addColumn('ref', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('poll_option_id', 'bigint')
    .addColumn('poll_option_title', 'text')
    .addColumn('checkout_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('donation_id', 'bigint', (c) => c.references('donations.id').onDelete('set null'))
    .execute();

  await withId(db.schema.createTable('provider_payments'), dialect)
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('payment_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('pending_id', 'bigint', (c) => c.references('pending_donations.id').onDelete('set null'))
    .addColumn('donation_id', 'bigint', (c) => c.references('donations.id').onDelete('set null'))
    .addColumn('fingerprint', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('provider_payments_provider_payment_id', ['provider', 'payment_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_payments').execute();
  await db.schema.dropTable('pending_donations').execute();
  await db.schema.dropTable('payment_settings').execute();
}
