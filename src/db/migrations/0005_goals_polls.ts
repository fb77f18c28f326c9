import { sql, type Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);

  await withId(db.schema.createTable('goals'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('start_amount', 'bigint', (c) => c.notNull())
    .addColumn('goal_amount', 'bigint', (c) => c.notNull())
    .addColumn('raised_amount', 'bigint', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('goals_user_id_id').on('goals').columns(['user_id', 'id desc']).execute();
  // The expiry sweep looks only at running goals with an end date.
  await db.schema
    .createIndex('goals_active_expires_at')
    .on('goals')
    .column('expires_at')
    .where(sql.ref('is_active'), '=', 1)
    .execute();

  await withId(db.schema.createTable('polls'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('allow_user_options', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('polls_user_id_id').on('polls').columns(['user_id', 'id desc']).execute();
  // One active poll per streamer, enforced by the database so two concurrent creates cannot both win.
  await db.schema
    .createIndex('polls_one_active_per_user')
    .on('polls')
    .column('user_id')
    .unique()
    .where(sql.ref('is_active'), '=', 1)
    .execute();

  await withId(db.schema.createTable('poll_options'), dialect)
    .addColumn('poll_id', 'bigint', (c) => c.notNull().references('polls.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('title_key', 'text', (c) => c.notNull())
    .addColumn('votes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('amount_sum', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('added_by_donor', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // Titles are unique per poll ignoring case: concurrent donors adding "Pizza" and "pizza" get one option.
  await db.schema.createIndex('poll_options_poll_id_title_key').on('poll_options').columns(['poll_id', 'title_key']).unique().execute();

  // The option a donation voted for, kept for audit and recounts; null when it did not vote.
  await db.schema
    .alterTable('donations')
    .addColumn('poll_option_id', 'bigint', (c) => c.references('poll_options.id').onDelete('set null'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('donations').dropColumn('poll_option_id').execute();
  for (const table of ['poll_options', 'polls', 'goals']) await db.schema.dropTable(table).execute();
}
