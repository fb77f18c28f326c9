import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppRow, AppsTable } from './apps.table.js';

type Db = Kysely<DB>;

export async function insertApp(db: Db, row: Insertable<AppsTable>): Promise<AppRow> {
  return db.insertInto('apps').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findAppById(db: Db, id: number): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An owner's applications in creation order. */
export async function listAppsOfOwner(db: Db, ownerId: number): Promise<AppRow[]> {
  return db.selectFrom('apps').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
}

/** Changes an application (and its `updated_at`); false when there is no such application. */
export async function updateApp(db: Db, id: number, changes: Omit<Updateable<AppsTable>, 'id' | 'updated_at'>): Promise<boolean> {
  const result = await db.updateTable('apps').set({ ...changes, updated_at: Date.now() }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Tokens, grants and codes issued to the application go with it (foreign keys cascade). */
export async function deleteAppRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('apps').where('id', '=', id).execute();
}
