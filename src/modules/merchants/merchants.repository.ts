import type { Kysely } from 'kysely';
import { executeNamed } from '../../db/named-statements.js';
import type { DB } from '../../db/schema.js';
import type { MerchantRow } from './merchants.table.js';

type Db = Kysely<DB>;

export async function insertMerchant(db: Db, row: { app_id: number; identifier: string; name: string }): Promise<MerchantRow> {
  const now = Date.now();
  return db.insertInto('merchants').values({ ...row, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export async function findMerchantByIdentifier(db: Db, identifier: string): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().where('identifier', '=', identifier).executeTakeFirst();
}

export async function findMerchantById(db: Db, id: number): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listMerchants(db: Db, appId?: number): Promise<MerchantRow[]> {
  let query = db.selectFrom('merchants').selectAll().orderBy('id');
  if (appId !== undefined) query = query.where('app_id', '=', appId);
  return query.execute();
}

/** Every application with its Merchandise API access flag, by client id. */
export async function listAppsMerchandiseAccess(db: Db): Promise<Array<{ id: number; name: string; owner_id: number; merchandise_access: number }>> {
  return db.selectFrom('apps').select(['id', 'name', 'owner_id', 'merchandise_access']).orderBy('id').execute();
}

/** Changes with every committed write to `apps` or `merchants` (triggers, migration 0015). */
export async function merchantAuthVersion(db: Db): Promise<number> {
  // Read by every Merchandise API request (merchant-auth.ts): a named statement on PostgreSQL.
  const { rows } = await executeNamed(db, db.selectFrom('change_versions').select('version').where('name', '=', 'merchant_auth').compile());
  return Number(rows[0]?.version ?? 0);
}
