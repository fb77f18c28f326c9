import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toMajor } from '../../domain/money.js';
import { convertMinor } from '../../domain/rates.js';
import { loadRates } from '../currencies/currencies.repository.js';
import type { LedgerRow, NewLedgerRow } from './balances.table.js';

/** Appends ledger rows; call with the transaction that records what earned them. */
export async function insertLedgerEntries(tx: Kysely<DB>, rows: NewLedgerRow[]): Promise<void> {
  if (rows.length) await tx.insertInto('balance_ledger').values(rows).execute();
}

export async function ledgerOfSource(db: Kysely<DB>, source: NewLedgerRow['source'], sourceId: number): Promise<LedgerRow[]> {
  return db.selectFrom('balance_ledger').selectAll().where('source', '=', source).where('source_id', '=', sourceId).orderBy('id').execute();
}

export interface Balance {
  /** The streamer's main currency. */
  currency: string;
  /** Major units (JSON number), in `currency`. */
  amount: number;
  /** Minor units, in `currency`. */
  amount_minor: number;
  /** The ledger sums per credited currency (major units): more than one only after a main-currency change. */
  by_currency: Record<string, number>;
}

/**
 * A streamer's balance: the sum of their ledger rows. Rows are credited in the main currency of the
 * time; if the streamer has changed it since, older sums are converted at today's rates (half-up).
 */
export async function balanceOf(db: Kysely<DB>, userId: number): Promise<Balance> {
  const user = await db.selectFrom('users').select(['currency']).where('id', '=', userId).executeTakeFirstOrThrow();
  const sums = await db
    .selectFrom('balance_ledger')
    .select(['credited_currency', (eb) => eb.fn.sum<string | number>('credited_amount').as('total')])
    .where('account', '=', 'streamer')
    .where('user_id', '=', userId)
    .groupBy('credited_currency')
    .execute();
  let minor = 0;
  const byCurrency: Record<string, number> = {};
  const foreign = sums.filter((s) => s.credited_currency !== user.currency);
  const rates = foreign.length ? await loadRates(db) : {};
  for (const s of sums) {
    const total = Number(s.total);
    byCurrency[s.credited_currency] = toMajor(total);
    minor += s.credited_currency === user.currency ? total : convertMinor(total, s.credited_currency, user.currency, rates);
  }
  return { currency: user.currency, amount: toMajor(minor), amount_minor: minor, by_currency: byCurrency };
}

/** The service's merchandise revenue per currency (minor units). */
export async function serviceRevenue(db: Kysely<DB>): Promise<Record<string, number>> {
  const sums = await db
    .selectFrom('balance_ledger')
    .select(['credited_currency', (eb) => eb.fn.sum<string | number>('credited_amount').as('total')])
    .where('account', '=', 'service')
    .groupBy('credited_currency')
    .execute();
  return Object.fromEntries(sums.map((s) => [s.credited_currency, Number(s.total)]));
}
