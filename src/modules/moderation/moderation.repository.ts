import type { Insertable, Kysely } from 'kysely';
import type { NowStatements } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { DonationRow } from '../donations/donations.table.js';
import type { DonationModerationRow, DonationModerationTable, ModerationSettingsRow, ModerationSettingsTable, ModerationStatus } from './moderation.table.js';

export async function findSettings(db: Kysely<DB>, userId: number): Promise<ModerationSettingsRow | undefined> {
  return db.selectFrom('moderation_settings').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export async function saveSettings(db: Kysely<DB>, row: Insertable<ModerationSettingsTable>): Promise<void> {
  const { user_id: _key, ...changes } = row;
  await db.insertInto('moderation_settings').values(row).onConflict((oc) => oc.column('user_id').doUpdateSet(changes)).execute();
}

export async function insertDonationModeration(tx: Kysely<DB>, row: Insertable<DonationModerationTable>): Promise<void> {
  await tx.insertInto('donation_moderation').values(row).execute();
}

const MODERATION_COLUMNS: readonly (keyof DonationModerationTable)[] = ['donation_id', 'user_id', 'status', 'shown_username', 'shown_message', 'reasons', 'publish_at', 'decided_at'];
const INSERT_MODERATION = `insert into donation_moderation (${MODERATION_COLUMNS.join(', ')}) values (${MODERATION_COLUMNS.map(() => '?').join(', ')})`;

/** `insertDonationModeration` on SQLite, as a statement of `transactNow`. */
export function insertDonationModerationNow(tx: NowStatements, row: DonationModerationTable): void {
  tx.run(INSERT_MODERATION, MODERATION_COLUMNS.map((column) => row[column]));
}

/** The moderation rows of these donations (of one streamer), by donation id. */
export async function moderationOf(db: Kysely<DB>, userId: number, donationIds: number[]): Promise<Map<number, DonationModerationRow>> {
  if (donationIds.length === 0) return new Map();
  const rows = await db.selectFrom('donation_moderation').selectAll().where('user_id', '=', userId).where('donation_id', 'in', donationIds).execute();
  return new Map(rows.map((r) => [Number(r.donation_id), r]));
}

export interface HeldDonation {
  donation: DonationRow;
  moderation: DonationModerationRow;
}

/** The streamer's donations waiting for approval, oldest first. */
export async function heldDonations(db: Kysely<DB>, userId: number, limit: number): Promise<HeldDonation[]> {
  const rows = await db
    .selectFrom('donation_moderation as m')
    .innerJoin('donations as d', 'd.id', 'm.donation_id')
    .selectAll('d')
    .select(['m.status', 'm.shown_username', 'm.shown_message', 'm.reasons', 'm.publish_at', 'm.decided_at', 'm.donation_id'])
    .where('m.user_id', '=', userId)
    .where('m.status', '=', 'held')
    .orderBy('m.donation_id')
    .limit(limit)
    .execute();
  return rows.map((r) => {
    const { status, shown_username, shown_message, reasons, publish_at, decided_at, donation_id, ...donation } = r;
    return { donation, moderation: { donation_id, user_id: donation.user_id, status, shown_username, shown_message, reasons, publish_at, decided_at } };
  });
}

export async function countHeld(db: Kysely<DB>, userId: number): Promise<number> {
  const row = await db.selectFrom('donation_moderation').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('status', '=', 'held').executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Moves one held donation of the streamer to `status`; true when it was held (a second click,
 * or another tab's, changes nothing and so publishes nothing twice).
 */
export async function decideHeld(tx: Kysely<DB>, userId: number, donationId: number, status: Exclude<ModerationStatus, 'held'>, at: number): Promise<boolean> {
  const result = await tx
    .updateTable('donation_moderation')
    .set({ status, decided_at: at, publish_at: status === 'published' ? at : null })
    .where('donation_id', '=', donationId)
    .where('user_id', '=', userId)
    .where('status', '=', 'held')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
