import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CustomAlertRow } from '../custom-alerts/custom-alerts.table.js';
import type { DonationRow } from '../donations/donations.table.js';
import type { SaleRow } from '../sales/sales.table.js';
import type { AlertType } from './widgets.table.js';

/**
 * The alerts widget reads across the three tables its alert types live in. They share `id`,
 * `user_id`, `is_shown`, `shown_at` and `created_at`, which is all these queries touch.
 */
const TABLE = { donation: 'donations', custom: 'custom_alerts', 'merchandise-sale': 'merchandise_sales' } as const;

/**
 * Sets is_shown 1 and shown_at `at` on one of the streamer's alerts unless already shown, then
 * returns its `shown_at` — undefined when the streamer has no such alert.
 */
/**
 * Marks an alert shown if it was not yet. `marked` says whether this call did it (false: it was
 * shown before, and keeps its first `shown_at`); undefined: no such alert of this streamer.
 */
export async function markAlertShown(db: Kysely<DB>, type: AlertType, userId: number, id: number, at: number): Promise<{ shown_at: number | null; marked: boolean } | undefined> {
  // The cast only names one of the three tables for the types; the columns used are common to all.
  const table = TABLE[type] as 'donations';
  const { numUpdatedRows } = await db.updateTable(table).set({ is_shown: 1, shown_at: at }).where('id', '=', id).where('user_id', '=', userId).where('is_shown', '=', 0).executeTakeFirst();
  const row = await db.selectFrom(table).select(['shown_at']).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return row && { shown_at: row.shown_at, marked: numUpdatedRows > 0n };
}

/** The streamer's alerts created since `since` and not yet shown: up to `limit` newest of each type. */
export async function unshownAlertRows(
  db: Kysely<DB>,
  userId: number,
  since: number,
  limit: number,
): Promise<{ donations: DonationRow[]; customs: CustomAlertRow[]; sales: SaleRow[] }> {
  const [donations, customs, sales] = await Promise.all([
    db.selectFrom('donations').selectAll().where('user_id', '=', userId).where('is_shown', '=', 0).where('created_at', '>=', since).orderBy('id', 'desc').limit(limit).execute(),
    db.selectFrom('custom_alerts').selectAll().where('user_id', '=', userId).where('is_shown', '=', 0).where('created_at', '>=', since).orderBy('id', 'desc').limit(limit).execute(),
    db.selectFrom('merchandise_sales').selectAll().where('user_id', '=', userId).where('is_shown', '=', 0).where('created_at', '>=', since).orderBy('id', 'desc').limit(limit).execute(),
  ]);
  return { donations, customs, sales };
}
