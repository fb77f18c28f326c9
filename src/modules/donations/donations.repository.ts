import type { Insertable, Kysely } from 'kysely';
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

export async function markDonationShown(db: Kysely<DB>, userId: number, id: number, at = Date.now()): Promise<DonationRow | undefined> {
  await db.updateTable('donations').set({ is_shown: 1, shown_at: at }).where('user_id', '=', userId).where('id', '=', id).where('is_shown', '=', 0).execute();
  return findDonation(db, userId, id);
}
