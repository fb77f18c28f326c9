import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { PollOptionRow, PollOptionsTable, PollRow, PollsTable } from './polls.table.js';

export type PollState = 'active' | 'finished' | 'all';

export async function insertPoll(db: Kysely<DB>, row: Insertable<PollsTable>): Promise<PollRow> {
  return db.insertInto('polls').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function insertOptions(db: Kysely<DB>, rows: Insertable<PollOptionsTable>[]): Promise<void> {
  if (rows.length) await db.insertInto('poll_options').values(rows).execute();
}

export async function findPoll(db: Kysely<DB>, id: number): Promise<PollRow | undefined> {
  return db.selectFrom('polls').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findActivePoll(db: Kysely<DB>, userId: number): Promise<PollRow | undefined> {
  return db.selectFrom('polls').selectAll().where('user_id', '=', userId).where('is_active', '=', 1).executeTakeFirst();
}

/** Options of some polls in display (creation) order. */
export async function optionsOf(db: Kysely<DB>, pollIds: readonly number[]): Promise<PollOptionRow[]> {
  if (!pollIds.length) return [];
  return db.selectFrom('poll_options').selectAll().where('poll_id', 'in', pollIds).orderBy('id').execute();
}

export async function findOption(db: Kysely<DB>, pollId: number, id: number): Promise<PollOptionRow | undefined> {
  return db.selectFrom('poll_options').selectAll().where('poll_id', '=', pollId).where('id', '=', id).executeTakeFirst();
}

export async function findOptionByKey(db: Kysely<DB>, pollId: number, titleKey: string): Promise<PollOptionRow | undefined> {
  return db.selectFrom('poll_options').selectAll().where('poll_id', '=', pollId).where('title_key', '=', titleKey).executeTakeFirst();
}

export async function countOptions(db: Kysely<DB>, pollId: number): Promise<number> {
  const row = await db.selectFrom('poll_options').select((eb) => eb.fn.countAll<number>().as('n')).where('poll_id', '=', pollId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest first. */
export async function listPollRows(db: Kysely<DB>, userId: number, opts: { state: PollState; limit: number }): Promise<PollRow[]> {
  let query = db.selectFrom('polls').selectAll().where('user_id', '=', userId);
  if (opts.state !== 'all') query = query.where('is_active', '=', opts.state === 'active' ? 1 : 0);
  return query.orderBy('id', 'desc').limit(opts.limit).execute();
}

/**
 * Marks the streamer's active poll (or one given poll, if active) as changed and returns it. On
 * PostgreSQL this takes the poll's row lock, serializing votes, edits and closing per poll, so
 * every published payload is a consistent snapshot of the tallies.
 */
export async function lockActivePoll(db: Kysely<DB>, where: { userId: number } | { pollId: number }, at: number): Promise<PollRow | undefined> {
  let query = db.updateTable('polls').set({ updated_at: at }).where('is_active', '=', 1);
  query = 'userId' in where ? query.where('user_id', '=', where.userId) : query.where('id', '=', where.pollId);
  return query.returningAll().executeTakeFirst();
}

export async function updatePollRow(db: Kysely<DB>, id: number, set: Updateable<PollsTable>): Promise<PollRow> {
  return db.updateTable('polls').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Ends an active poll; only the caller that gets the row back reports `finished`. */
export async function closePollRow(db: Kysely<DB>, id: number, at: number): Promise<PollRow | undefined> {
  return db.updateTable('polls').set({ is_active: 0, ended_at: at, updated_at: at }).where('id', '=', id).where('is_active', '=', 1).returningAll().executeTakeFirst();
}

export async function addVote(db: Kysely<DB>, optionId: number, sum: number): Promise<void> {
  await db
    .updateTable('poll_options')
    .set((eb) => ({ votes: eb('votes', '+', 1), amount_sum: eb('amount_sum', '+', sum) }))
    .where('id', '=', optionId)
    .execute();
}
