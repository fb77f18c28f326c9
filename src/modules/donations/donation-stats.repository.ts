import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * The dashboard overview's aggregates over a streamer's donations, computed in SQL (both
 * dialects). Sums follow the dashboard's multi-currency rule: only donations converted into the
 * streamer's current main currency add up (`amount_in_user_currency` where `user_currency` is it);
 * donations recorded under an earlier main currency are left out rather than mixed.
 */

export const DAY_MS = 24 * 3600 * 1000;

/** One UTC day with donations: its number since the epoch (`floor(ms / DAY_MS)`), count and sum. */
export interface DailyDonations {
  day: number;
  count: number;
  /** Minor units of the main currency. */
  total: number;
}

/** Days since `since` that had donations, oldest first; days without any are absent. */
export async function donationsPerDay(db: Kysely<DB>, userId: number, userCurrency: string, since: number): Promise<DailyDonations[]> {
  // created_at is a non-negative bigint on both dialects, so integer division floors to the UTC day.
  const day = sql<string | number>`created_at / ${sql.lit(DAY_MS)}`;
  const rows = await db
    .selectFrom('donations')
    .select((eb) => [day.as('day'), eb.fn.countAll<string | number>().as('n'), eb.fn.sum<string | number>('amount_in_user_currency').as('total')])
    .where('user_id', '=', userId)
    .where('user_currency', '=', userCurrency)
    .where('created_at', '>=', since)
    .groupBy(day)
    .orderBy(day)
    .execute();
  return rows.map((r) => ({ day: Number(r.day), count: Number(r.n), total: Number(r.total) }));
}

/** A donor by the name the stream may show, with how many donations and their sum. */
export interface TopDonor {
  username: string;
  count: number;
  /** Minor units of the main currency. */
  total: number;
}

/**
 * The donors who gave the most since `since`, largest sum first; ties go to whoever gave first.
 * A donor is the name as moderation lets it be shown (`donation_moderation.shown_username`, the
 * name as typed when the donation was not moderated): the overview may be on stream. Names are
 * compared exactly, the same on both dialects (no case folding: SQLite's lower() is ASCII only).
 */
export async function topDonors(db: Kysely<DB>, userId: number, userCurrency: string, since: number, limit: number): Promise<TopDonor[]> {
  const name = sql<string>`coalesce(donation_moderation.shown_username, donations.username)`;
  const rows = await db
    .selectFrom('donations')
    .leftJoin('donation_moderation', 'donation_moderation.donation_id', 'donations.id')
    .select((eb) => [
      name.as('name'),
      eb.fn.min('donations.id').as('first_id'),
      eb.fn.countAll<string | number>().as('n'),
      eb.fn.sum<string | number>('donations.amount_in_user_currency').as('total'),
    ])
    .where('donations.user_id', '=', userId)
    .where('donations.user_currency', '=', userCurrency)
    .where('donations.created_at', '>=', since)
    // Rejected donations are not shown anywhere on stream.
    .where((eb) => eb.or([eb('donation_moderation.status', 'is', null), eb('donation_moderation.status', '<>', 'rejected')]))
    .groupBy(name)
    .orderBy('total', 'desc')
    .orderBy('first_id', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ username: r.name, count: Number(r.n), total: Number(r.total) }));
}

/** When the streamer's first donation paid through anything but `payinSystem` arrived, if one has. */
export async function firstDonationNotThrough(db: Kysely<DB>, userId: number, payinSystem: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('donations')
    .select('created_at')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('payin_system', 'is', null), eb('payin_system', '<>', payinSystem)]))
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.created_at) : undefined;
}
