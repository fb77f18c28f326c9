import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AlertVariationRow, NewAlertVariationRow } from './widgets.table.js';

type Db = Kysely<DB>;
/** The fields a streamer sets; owner, id and timestamps are the repository's. */
export type VariationFields = Omit<NewAlertVariationRow, 'id' | 'user_id' | 'created_at' | 'updated_at'>;

/** By type, then from the lowest minimum amount: the order pages list them and the widget picks from. */
export async function listVariationRows(db: Db, userId: number): Promise<AlertVariationRow[]> {
  return db.selectFrom('alert_variations').selectAll().where('user_id', '=', userId).orderBy('type').orderBy('min_amount').orderBy('id').execute();
}

export async function findVariation(db: Db, userId: number, id: number): Promise<AlertVariationRow | undefined> {
  return db.selectFrom('alert_variations').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export async function countVariations(db: Db, userId: number): Promise<number> {
  const { count } = await db.selectFrom('alert_variations').select((eb) => eb.fn.countAll<number>().as('count')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertVariation(db: Db, userId: number, fields: VariationFields, at = Date.now()): Promise<AlertVariationRow> {
  return db
    .insertInto('alert_variations')
    .values({ user_id: userId, ...fields, created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Undefined when the streamer has no such variation. */
export async function updateVariationRow(db: Db, userId: number, id: number, fields: VariationFields): Promise<AlertVariationRow | undefined> {
  return db
    .updateTable('alert_variations')
    .set({ ...fields, updated_at: Date.now() })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** False when the streamer has no such variation. */
export async function deleteVariationRow(db: Db, userId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('alert_variations').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
