import type { Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

/** Merchandise API: merchants, merchandise, sales (idempotent per merchant) and the balance ledger. */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  const real = dialect === 'postgres' ? 'double precision' : 'real';

  await withId(db.schema.createTable('merchants'), dialect)
    .addColumn('app_id', 'bigint', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merchants_app_id').on('merchants').column('app_id').execute();

  await withId(db.schema.createTable('merchandise'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_percentage', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('price_user', 'bigint', (c) => c.notNull())
    .addColumn('price_service', 'bigint', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('img_url', 'text')
    .addColumn('end_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('merchandise_merchant_identifier', ['merchant_id', 'identifier'])
    .execute();

  await withId(db.schema.createTable('merchandise_sales'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('merchandise_id', 'bigint', (c) => c.notNull().references('merchandise.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('bought_amount', 'integer', (c) => c.notNull())
    .addColumn('username', 'text')
    .addColumn('message', 'text')
    .addColumn('is_shown', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('shown_at', 'bigint')
    // compatibility.md §3: an external_id is used once per merchant; concurrent duplicates meet here.
    .addUniqueConstraint('merchandise_sales_merchant_external_id', ['merchant_id', 'external_id'])
    .execute();
  await db.schema.createIndex('merchandise_sales_user_id_id').on('merchandise_sales').columns(['user_id', 'id desc']).execute();

  await withId(db.schema.createTable('balance_ledger'), dialect)
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('source_id', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('rate', real, (c) => c.notNull())
    .addColumn('credited_amount', 'bigint', (c) => c.notNull())
    .addColumn('credited_currency', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('balance_ledger_user_id').on('balance_ledger').columns(['user_id', 'credited_currency']).execute();
  await db.schema.createIndex('balance_ledger_source').on('balance_ledger').columns(['source', 'source_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['balance_ledger', 'merchandise_sales', 'merchandise', 'merchants']) await db.schema.dropTable(table).execute();
}
