import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CustomAlertRow, NewCustomAlertRow } from './custom-alerts.table.js';

/** Throws the dialect's unique violation when (client_id, user_id, external_id) is taken. */
export async function insertCustomAlert(db: Kysely<DB>, row: NewCustomAlertRow): Promise<CustomAlertRow> {
  return db.insertInto('custom_alerts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findCustomAlert(db: Kysely<DB>, userId: number, id: number): Promise<CustomAlertRow | undefined> {
  return db.selectFrom('custom_alerts').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

export async function findCustomAlertByExternalId(db: Kysely<DB>, clientId: number, userId: number, externalId: string): Promise<CustomAlertRow | undefined> {
  return db
    .selectFrom('custom_alerts')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('user_id', '=', userId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

/** Newest first. */
export async function listCustomAlerts(db: Kysely<DB>, userId: number, limit: number, offset = 0): Promise<CustomAlertRow[]> {
  return db.selectFrom('custom_alerts').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

/** For the widget: is_shown 0 → 1 once; shown_at keeps the first display time. */
export async function markCustomAlertShown(db: Kysely<DB>, userId: number, id: number, at = Date.now()): Promise<CustomAlertRow | undefined> {
  await db.updateTable('custom_alerts').set({ is_shown: 1, shown_at: at }).where('user_id', '=', userId).where('id', '=', id).where('is_shown', '=', 0).execute();
  return findCustomAlert(db, userId, id);
}
