import type { Insertable, Kysely } from 'kysely';
import { containsText } from '../../db/like.js';
import type { DB } from '../../db/schema.js';
import type { DonationRow, DonationsTable } from './donations.table.js';

export async function insertDonation(db: Kysely<DB>, row: Insertable<DonationsTable>): Promise<DonationRow> {
  return db.insertInto('donations').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findDonation(db: Kysely<DB>, userId: number, id: number): Promise<DonationRow | undefined> {
  return db.selectFrom('donations').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/** One page, newest first (INTEROP §2), and the total for pagination meta. */
export async function pageOfDonations(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ rows: DonationRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.selectFrom('donations').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(perPage).offset((page - 1) * perPage).execute(),
    db.selectFrom('donations').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** What the dashboard's donation list filters on; every field is optional. Times are epoch ms. */
export interface DonationFilter {
  /** Part of the donor name, ignoring case. */
  donor?: string;
  /** The currency the donor paid in. */
  currency?: string;
  fromMs?: number;
  toMsExclusive?: number;
  /** Minor units: of `currency` when one is chosen, else of the streamer's currency at donation time. */
  minAmount?: number;
}

/** One page of a streamer's donations matching `filter`, newest first, and how many match in all. */
export async function filteredDonations(
  db: Kysely<DB>,
  userId: number,
  filter: DonationFilter,
  opts: { limit: number; offset: number },
): Promise<{ rows: DonationRow[]; total: number }> {
  let query = db.selectFrom('donations').where('user_id', '=', userId);
  if (filter.donor) query = query.where(containsText('username', filter.donor));
  if (filter.currency) query = query.where('currency', '=', filter.currency);
  if (filter.fromMs !== undefined) query = query.where('created_at', '>=', filter.fromMs);
  if (filter.toMsExclusive !== undefined) query = query.where('created_at', '<', filter.toMsExclusive);
  if (filter.minAmount !== undefined) query = query.where(filter.currency ? 'amount' : 'amount_in_user_currency', '>=', filter.minAmount);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').limit(opts.limit).offset(opts.offset).execute(),
    query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** The streamer's latest donations, newest first. */
export async function latestDonations(db: Kysely<DB>, userId: number, limit: number): Promise<DonationRow[]> {
  return db.selectFrom('donations').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).execute();
}

/**
 * How many donations the streamer received since `since` that were converted into `userCurrency`,
 * and their sum in its minor units.
 */
export async function donationTotalsSince(db: Kysely<DB>, userId: number, userCurrency: string, since: number): Promise<{ count: number; total: number }> {
  const row = await db
    .selectFrom('donations')
    .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.sum<string | number | null>('amount_in_user_currency').as('total')])
    .where('user_id', '=', userId)
    .where('user_currency', '=', userCurrency)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), total: Number(row.total ?? 0) };
}

export async function markDonationShown(db: Kysely<DB>, userId: number, id: number, at = Date.now()): Promise<DonationRow | undefined> {
  await db.updateTable('donations').set({ is_shown: 1, shown_at: at }).where('user_id', '=', userId).where('id', '=', id).where('is_shown', '=', 0).execute();
  return findDonation(db, userId, id);
}
