import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { UserRow } from '../accounts/accounts.table.js';

/** A streamer's widget token row: its hash (what requests match) and its sealed copy (what the settings page shows). */
export interface WidgetTokenValues {
  token_hash: string;
  token_sealed: string;
  created_at: number;
}

export async function findSealedWidgetToken(db: Kysely<DB>, userId: number): Promise<string | undefined> {
  const row = await db.selectFrom('widget_tokens').select('token_sealed').where('user_id', '=', userId).executeTakeFirst();
  return row?.token_sealed;
}

/** Inserts the streamer's first token; a concurrent first insert wins and this one is dropped. */
export async function insertWidgetTokenIfAbsent(db: Kysely<DB>, userId: number, values: WidgetTokenValues): Promise<void> {
  await db
    .insertInto('widget_tokens')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}

/** Replaces the streamer's token in one statement: the previous one stops matching at once. */
export async function replaceWidgetToken(db: Kysely<DB>, userId: number, values: WidgetTokenValues): Promise<void> {
  await db
    .insertInto('widget_tokens')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
}

export async function findUserByWidgetTokenHash(db: Kysely<DB>, tokenHash: string): Promise<UserRow | undefined> {
  return db.selectFrom('widget_tokens').innerJoin('users', 'users.id', 'widget_tokens.user_id').selectAll('users').where('widget_tokens.token_hash', '=', tokenHash).executeTakeFirst();
}

/** The hash of the streamer's current token, with whether the account is active; undefined when it has none. */
export async function findWidgetTokenHash(db: Kysely<DB>, userId: number): Promise<{ tokenHash: string; active: boolean } | undefined> {
  const row = await db
    .selectFrom('widget_tokens')
    .innerJoin('users', 'users.id', 'widget_tokens.user_id')
    .select(['widget_tokens.token_hash', 'users.is_active'])
    .where('widget_tokens.user_id', '=', userId)
    .executeTakeFirst();
  return row && { tokenHash: row.token_hash, active: row.is_active === 1 };
}
