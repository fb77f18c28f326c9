import type { Kysely } from 'kysely';

/**
 * Donor-page moderation (issue 12).
 *
 * moderation_settings: one row per streamer who saved moderation settings; no row means no rules
 * (the donation path then reads one missing row and writes nothing more). Banned words are a JSON
 * array of what the streamer typed; amounts are minor units of the streamer's main currency.
 *
 * donation_moderation: what the stream may show of a donation recorded under rules, and whether
 * its alert is published, held for approval or rejected. The donation row keeps what the donor
 * sent (the record of money the API lists); this row keeps what was published. Donations without
 * one were recorded with no rules and are shown as sent.
 *
 * outbox.not_before: an event is not published before this time (ms), so an alert delay is a row
 * in the database and survives restarts; null publishes at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('moderation_settings')
    .addColumn('user_id', 'bigint', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('banned_words', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('banned_words_mode', 'text', (c) => c.notNull().defaultTo('mask'))
    .addColumn('links', 'text', (c) => c.notNull().defaultTo('allow'))
    .addColumn('max_message_length', 'integer')
    .addColumn('min_message_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('ip_rate_limit', 'integer')
    .addColumn('donor_rate_limit', 'integer')
    .addColumn('rate_window_seconds', 'integer', (c) => c.notNull().defaultTo(60))
    .addColumn('approval_required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('alert_delay_seconds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('donation_moderation')
    .addColumn('donation_id', 'bigint', (c) => c.primaryKey().references('donations.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('shown_username', 'text', (c) => c.notNull())
    .addColumn('shown_message', 'text', (c) => c.notNull())
    .addColumn('reasons', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('publish_at', 'bigint')
    .addColumn('decided_at', 'bigint')
    .execute();
  await db.schema.createIndex('donation_moderation_user_status').on('donation_moderation').columns(['user_id', 'status', 'donation_id']).execute();

  await db.schema.alterTable('outbox').addColumn('not_before', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('outbox').dropColumn('not_before').execute();
  await db.schema.dropTable('donation_moderation').execute();
  await db.schema.dropTable('moderation_settings').execute();
}
