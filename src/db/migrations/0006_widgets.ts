import type { Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);

  // One secret widget token per streamer: looked up by its SHA-256, shown again from its sealed
  // (AES-256-GCM) copy. Regenerating replaces both.
  await db.schema
    .createTable('widget_tokens')
    .addColumn('user_id', 'bigint', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('alert_variations'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('min_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('text_template', 'text', (c) => c.notNull())
    .addColumn('sound_url', 'text')
    .addColumn('image_url', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_variations_user_id_type').on('alert_variations').columns(['user_id', 'type']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('alert_variations').execute();
  await db.schema.dropTable('widget_tokens').execute();
}
