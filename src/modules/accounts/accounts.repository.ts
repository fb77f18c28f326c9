import type { Kysely } from 'kysely';
import { containsText } from '../../db/like.js';
import type { DB } from '../../db/schema.js';
import type { NewUserRow, UserRow, UserUpdate } from './accounts.table.js';

type Db = Kysely<DB>;

export async function insertUser(db: Db, row: NewUserRow): Promise<UserRow> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function countUsers(db: Db): Promise<number> {
  const { count } = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(count);
}

export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What services check before acting for a streamer: exists, active, main currency, name. */
export type StreamerRef = Pick<UserRow, 'id' | 'name' | 'currency' | 'is_active'>;

export async function findStreamer(db: Db, id: number): Promise<StreamerRef | undefined> {
  return db.selectFrom('users').select(['id', 'name', 'currency', 'is_active']).where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
}

export async function findUserByCode(db: Db, code: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('code', '=', code.trim().toLowerCase()).executeTakeFirst();
}

export async function findUserByPromocode(db: Db, promocode: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('merchandise_promocode', '=', promocode.trim().toUpperCase()).executeTakeFirst();
}

export async function codeOrNameTaken(db: Db, code: string, nameKey: string, exceptUserId?: number): Promise<{ code: boolean; name: boolean }> {
  let query = db.selectFrom('users').select(['code', 'name_key']).where((eb) => eb.or([eb('code', '=', code), eb('name_key', '=', nameKey)]));
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  const rows = await query.execute();
  return { code: rows.some((r) => r.code === code), name: rows.some((r) => r.name_key === nameKey) };
}

/** Is `nameKey` (lower-cased name) held by an account other than `exceptUserId`? */
export async function nameKeyTaken(db: Db, nameKey: string, exceptUserId: number): Promise<boolean> {
  const holder = await db.selectFrom('users').select('id').where('name_key', '=', nameKey).where('id', '!=', exceptUserId).executeTakeFirst();
  return holder !== undefined;
}

export async function updateUser(db: Db, id: number, changes: UserUpdate): Promise<UserRow | undefined> {
  return db.updateTable('users').set({ ...changes, updated_at: Date.now() }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function listUsers(db: Db, limit = 100, offset = 0): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').limit(limit).offset(offset).execute();
}

/** A row of the administrators' user list. */
export type UserListRow = Pick<UserRow, 'id' | 'name' | 'email' | 'code' | 'role' | 'is_active' | 'currency' | 'created_at'>;

/**
 * One page of accounts in id order, and how many match. `search` (optional) matches part of the
 * e-mail, name or code, ignoring case.
 */
export async function searchUserRows(db: Db, opts: { search?: string; limit: number; offset: number }): Promise<{ rows: UserListRow[]; total: number }> {
  let base = db.selectFrom('users');
  const search = opts.search;
  if (search) {
    base = base.where((eb) =>
      eb.or([containsText('email', search), containsText('name_key', search, { storedLowerCase: true }), containsText('code', search, { storedLowerCase: true })]),
    );
  }
  const [rows, count] = await Promise.all([
    base.select(['id', 'name', 'email', 'code', 'role', 'is_active', 'currency', 'created_at']).orderBy('id').limit(opts.limit).offset(opts.offset).execute(),
    base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export async function insertSession(db: Db, idHash: string, userId: number, ttlMs: number): Promise<void> {
  const now = Date.now();
  await db.insertInto('sessions').values({ id_hash: idHash, user_id: userId, created_at: now, expires_at: now + ttlMs }).execute();
}

export async function findSessionUser(db: Db, idHash: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', Date.now())
    .where('users.is_active', '=', 1)
    .executeTakeFirst();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of the account, except the one whose hash is `keepIdHash`. */
export async function deleteSessionsOfUser(db: Db, userId: number, keepIdHash?: string): Promise<void> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepIdHash) query = query.where('id_hash', '!=', keepIdHash);
  await query.execute();
}

export async function deleteExpiredSessions(db: Db): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', Date.now()).execute();
}
