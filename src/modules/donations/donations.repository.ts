import type { Insertable, Kysely } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import { containsText } from '../../db/like.js';
import type { DB } from '../../db/schema.js';
import type { DonationRow, DonationsTable } from './donations.table.js';

export async function insertDonation(db: Kysely<DB>, row: Insertable<DonationsTable>): Promise<DonationRow> {
  return db.insertInto('donations').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findDonation(db: Kysely<DB>, userId: number, id: number): Promise<DonationRow | undefined> {
  return db.selectFrom('donations').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/**
 * What a cached page of the streamer's donations depends on besides the rows: their name (shown
 * in every item), whether they are active, and their donation counter (migration 0015). One
 * primary-key read of each table. Undefined when there is no such user.
 */
export interface DonationPageStamp {
  name: string;
  isActive: boolean;
  /** Changes with every committed write to the streamer's donations; 0 before the first. */
  version: number;
  total: number;
}

/** The stamps of several streamers at once (batched-read.ts), by user id; unknown ids are left out. */
export async function donationPageStamps(db: Kysely<DB>, userIds: number[]): Promise<Map<number, DonationPageStamp>> {
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('donation_counters as c', 'c.user_id', 'u.id')
    .select(['u.id', 'u.name', 'u.is_active', 'c.version', 'c.total'])
    .where('u.id', 'in', userIds)
    .execute();
  return new Map(rows.map((row) => [row.id, { name: row.name, isActive: Boolean(row.is_active), version: Number(row.version ?? 0), total: Number(row.total ?? 0) }]));
}

const DONATION_COLUMNS = ['id', 'user_id', 'username', 'message_type', 'message', 'amount', 'currency', 'amount_in_user_currency', 'user_currency', 'payin_system', 'is_shown', 'created_at', 'shown_at', 'poll_option_id'] as const;

/**
 * One page, newest first (INTEROP §2), with the stamp it was read at. On PostgreSQL in ONE
 * statement — one round trip, and the rows, the total and the version are one snapshot. On SQLite,
 * where a statement costs no round trip and that join runs 2–3× slower than two plain reads
 * (materialized subquery), the stamp is read first and then the rows: a write committing between
 * them leaves the rows newer than the stamp, so the page is cached under a stamp that is already
 * out of date and never served from the cache. The total is the maintained counter either way,
 * never a `count(*)`.
 */
export async function pageOfDonations(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ stamp: DonationPageStamp; rows: DonationRow[] } | undefined> {
  const pageRows = db.selectFrom('donations').select(DONATION_COLUMNS).where('user_id', '=', userId).orderBy('id', 'desc').limit(perPage).offset((page - 1) * perPage);
  if (dialectOf(db) === 'sqlite') {
    const stamp = (await donationPageStamps(db, [userId])).get(userId);
    return stamp && { stamp, rows: await pageRows.execute() };
  }
  const found = await db
    .selectFrom('users as u')
    .leftJoin('donation_counters as c', 'c.user_id', 'u.id')
    .leftJoin(pageRows.as('d'), (join) => join.onTrue())
    .select(['u.name as user_name', 'u.is_active as user_is_active', 'c.version as counter_version', 'c.total as counter_total'])
    .select(DONATION_COLUMNS.map((column) => `d.${column}` as const))
    .where('u.id', '=', userId)
    .orderBy('d.id', 'desc')
    .execute();
  const first = found[0];
  if (!first) return undefined;
  const stamp = { name: first.user_name, isActive: Boolean(first.user_is_active), version: Number(first.counter_version ?? 0), total: Number(first.counter_total ?? 0) };
  // No page rows: the one row of the outer join has a null id.
  const rows = found.filter((r) => r.id !== null).map((r) => Object.fromEntries(DONATION_COLUMNS.map((column) => [column, r[column]])) as unknown as DonationRow);
  return { stamp, rows };
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
