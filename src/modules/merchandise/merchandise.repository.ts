import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { MerchandiseRow, MerchandiseUpdate, NewMerchandiseRow } from './merchandise.table.js';

type Db = Kysely<DB>;

export async function insertMerchandise(db: Db, row: NewMerchandiseRow): Promise<MerchandiseRow> {
  return db.insertInto('merchandise').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateMerchandiseRow(db: Db, id: number, changes: MerchandiseUpdate): Promise<MerchandiseRow> {
  return db.updateTable('merchandise').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function findMerchandiseById(db: Db, id: number): Promise<MerchandiseRow | undefined> {
  return db.selectFrom('merchandise').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findMerchandiseByIdentifier(db: Db, merchantId: number, identifier: string): Promise<MerchandiseRow | undefined> {
  return db.selectFrom('merchandise').selectAll().where('merchant_id', '=', merchantId).where('identifier', '=', identifier).executeTakeFirst();
}
