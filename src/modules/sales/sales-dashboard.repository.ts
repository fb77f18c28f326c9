import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { SaleRow } from './sales.table.js';

/** A sale as the streamer's dashboard lists it: with the merchandise title (JSON `{locale: title}`) and the merchant's name. */
export type StreamerSaleRow = Pick<SaleRow, 'id' | 'external_id' | 'amount' | 'currency' | 'bought_amount' | 'username' | 'created_at'> & { title: string; merchant: string };

/** One page of the sales credited to a streamer, newest first, and how many there are. */
export async function pageOfStreamerSales(db: Kysely<DB>, userId: number, opts: { limit: number; offset: number }): Promise<{ rows: StreamerSaleRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('merchandise_sales as s')
      .innerJoin('merchandise as m', 'm.id', 's.merchandise_id')
      .innerJoin('merchants as mc', 'mc.id', 's.merchant_id')
      .select(['s.id', 's.external_id', 's.amount', 's.currency', 's.bought_amount', 's.username', 's.created_at', 'm.title', 'mc.name as merchant'])
      .where('s.user_id', '=', userId)
      .orderBy('s.id', 'desc')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute(),
    db.selectFrom('merchandise_sales').select((eb) => eb.fn.countAll<string | number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
