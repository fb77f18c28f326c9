import type { Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  await withId(db.schema.createTable('custom_alerts'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'bigint', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('external_id', 'text')
    .addColumn('header', 'text')
    .addColumn('message', 'text')
    .addColumn('image_url', 'text')
    .addColumn('sound_url', 'text')
    .addColumn('is_shown', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('shown_at', 'bigint')
    .execute();
  // Spec 4.3: external_id is unique per application and streamer. NULLs are distinct in both
  // dialects, so alerts sent without an external_id never collide.
  await db.schema
    .createIndex('custom_alerts_external_id')
    .on('custom_alerts')
    .columns(['client_id', 'user_id', 'external_id'])
    .unique()
    .execute();
  await db.schema.createIndex('custom_alerts_user_id_id').on('custom_alerts').columns(['user_id', 'id desc']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('custom_alerts').execute();
}
