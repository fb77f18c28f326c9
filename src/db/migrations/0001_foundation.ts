import { sql, type Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

/**
 * The rates this migration seeds, frozen as shipped: a migration never imports runtime code, so a
 * later change of the runtime defaults (currencies/default-rates.ts) cannot make a fresh database
 * differ from one migrated back then. Units per US dollar.
 */
const SEED_RATES_AS_OF = '2025-11-01';
const SEED_RATES: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.866,
  RUB: 81.0,
  BYN: 3.38,
  KZT: 525.0,
  UAH: 42.0,
  BRL: 5.38,
  TRY: 42.1,
};

export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);

  await withId(db.schema.createTable('users'), dialect)
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull().unique())
    .addColumn('avatar', 'text')
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en_US'))
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('streamer'))
    .addColumn('merchandise_promocode', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();

  await withId(db.schema.createTable('apps'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('merchandise_access', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('apps_owner_id').on('apps').column('owner_id').execute();

  await db.schema
    .createTable('currency_rates')
    .addColumn('currency', 'text', (c) => c.primaryKey())
    .addColumn('per_usd', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  const now = Date.now();
  await db
    .insertInto('currency_rates')
    .values(Object.entries(SEED_RATES).map(([currency, per_usd]) => ({ currency, per_usd, as_of: SEED_RATES_AS_OF, updated_at: now })))
    .execute();

  await withId(db.schema.createTable('donations'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('message_type', 'text', (c) => c.notNull().defaultTo('text'))
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount_in_user_currency', 'bigint', (c) => c.notNull())
    .addColumn('user_currency', 'text', (c) => c.notNull())
    .addColumn('payin_system', 'text')
    .addColumn('is_shown', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('shown_at', 'bigint')
    .execute();
  // Listing is per streamer, newest first (compatibility.md §2).
  await db.schema.createIndex('donations_user_id_id').on('donations').columns(['user_id', 'id desc']).execute();

  await withId(db.schema.createTable('outbox'), dialect)
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_at', 'bigint')
    .addColumn('published_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('outbox_pending')
    .on('outbox')
    .column('id')
    .where(sql.ref('published_at'), 'is', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['outbox', 'donations', 'currency_rates', 'apps', 'sessions', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
