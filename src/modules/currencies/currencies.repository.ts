import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { RateTable } from '../../domain/rates.js';

export interface RateRow {
  currency: string;
  per_usd: number;
  as_of: string;
  updated_at: number;
}

export async function listRates(db: Kysely<DB>): Promise<RateRow[]> {
  return db.selectFrom('currency_rates').selectAll().orderBy('currency').execute();
}

export async function loadRates(db: Kysely<DB>): Promise<RateTable> {
  const rows = await db.selectFrom('currency_rates').select(['currency', 'per_usd']).execute();
  return Object.fromEntries(rows.map((r) => [r.currency, Number(r.per_usd)]));
}

export async function upsertRate(db: Kysely<DB>, currency: string, perUsd: number, asOf: string): Promise<void> {
  const values = { currency, per_usd: perUsd, as_of: asOf, updated_at: Date.now() };
  await db
    .insertInto('currency_rates')
    .values(values)
    .onConflict((oc) => oc.column('currency').doUpdateSet({ per_usd: perUsd, as_of: asOf, updated_at: values.updated_at }))
    .execute();
}
