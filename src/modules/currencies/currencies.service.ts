import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isOutputCurrency, OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { msg, ValidationError } from '../../domain/errors.js';
import type { RateTable } from '../../domain/rates.js';
import { listRates, loadRates, upsertRate, type RateRow } from './currencies.repository.js';

/** Sets how many units of `currency` one US dollar buys. USD itself is fixed at 1. */
export async function setRate(db: Kysely<DB>, currency: string, perUsd: string | number, asOf?: string): Promise<void> {
  const code = currency.trim().toUpperCase();
  if (!isOutputCurrency(code)) throw ValidationError.field('currency', msg('err.currency.one_of', { list: OUTPUT_CURRENCIES.join(', ') }));
  if (code === 'USD') throw ValidationError.field('currency', msg('err.rate.usd'));
  const rate = typeof perUsd === 'number' ? perUsd : Number(perUsd);
  if (!Number.isFinite(rate) || rate <= 0 || rate > 1e9) throw ValidationError.field('rate', msg('err.rate.positive'));
  const date = asOf ?? new Date().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date))) throw ValidationError.field('as_of', msg('err.rate.date'));
  await upsertRate(db, code, rate, date);
}

/** The rates in force (units per US dollar, by currency), as conversions use them. */
export async function currentRates(db: Kysely<DB>): Promise<RateTable> {
  return loadRates(db);
}

/** Every stored rate with its date, by currency code. */
export async function listCurrencyRates(db: Kysely<DB>): Promise<RateRow[]> {
  return listRates(db);
}
