import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { LedgerRow, NewLedgerRow } from './balances.table.js';

/** Appends ledger rows; call with the transaction that records what earned them. */
export async function insertLedgerEntries(tx: Kysely<DB>, rows: NewLedgerRow[]): Promise<void> {
  if (rows.length) await tx.insertInto('balance_ledger').values(rows).execute();
}

export async function ledgerOfSource(db: Kysely<DB>, source: NewLedgerRow['source'], sourceId: number): Promise<LedgerRow[]> {
  return db.selectFrom('balance_ledger').selectAll().where('source', '=', source).where('source_id', '=', sourceId).orderBy('id').execute();
}

/** A streamer's ledger totals per credited currency, minor units. */
export async function streamerLedgerSums(db: Kysely<DB>, userId: number): Promise<{ currency: string; total: number }[]> {
  const sums = await db
    .selectFrom('balance_ledger')
    .select(['credited_currency', (eb) => eb.fn.sum<string | number>('credited_amount').as('total')])
    .where('account', '=', 'streamer')
    .where('user_id', '=', userId)
    .groupBy('credited_currency')
    .execute();
  return sums.map((s) => ({ currency: s.credited_currency, total: Number(s.total) }));
}

/** One page of a streamer's ledger, newest first, and how many rows it has. */
export async function pageOfStreamerLedger(db: Kysely<DB>, userId: number, opts: { limit: number; offset: number }): Promise<{ rows: LedgerRow[]; total: number }> {
  const base = db.selectFrom('balance_ledger').where('account', '=', 'streamer').where('user_id', '=', userId);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').limit(opts.limit).offset(opts.offset).execute(),
    base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
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
