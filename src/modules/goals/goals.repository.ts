import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { GoalRow, GoalsTable } from './goals.table.js';

/** How many goals one sweep closes at most; the next sweep takes the rest. */
export const EXPIRY_BATCH = 500;

export type GoalState = 'active' | 'finished' | 'all';

export async function insertGoal(db: Kysely<DB>, row: Insertable<GoalsTable>): Promise<GoalRow> {
  return db.insertInto('goals').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findGoal(db: Kysely<DB>, id: number): Promise<GoalRow | undefined> {
  return db.selectFrom('goals').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Newest first. */
export async function listGoalRows(db: Kysely<DB>, userId: number, opts: { state: GoalState; limit: number }): Promise<GoalRow[]> {
  let query = db.selectFrom('goals').selectAll().where('user_id', '=', userId);
  if (opts.state !== 'all') query = query.where('is_active', '=', opts.state === 'active' ? 1 : 0);
  return query.orderBy('id', 'desc').limit(opts.limit).execute();
}

export async function countActiveGoals(db: Kysely<DB>, userId: number): Promise<number> {
  const row = await db.selectFrom('goals').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('is_active', '=', 1).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Marks an active goal as changed at `at` and returns it, or nothing when it is not active and
 * unexpired at `at`. On PostgreSQL this takes the row lock first, so the caller's later reads and
 * writes of the goal are serialized with donations, closes and sweeps.
 */
export async function lockActiveGoal(db: Kysely<DB>, id: number, at: number): Promise<GoalRow | undefined> {
  return db
    .updateTable('goals')
    .set({ updated_at: at })
    .where('id', '=', id)
    .where('is_active', '=', 1)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .returningAll()
    .executeTakeFirst();
}

export async function updateGoalRow(db: Kysely<DB>, id: number, set: Updateable<GoalsTable>): Promise<GoalRow> {
  return db.updateTable('goals').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Closes an active goal. The `is_active = 1` condition makes this the single decision point: of
 * any number of concurrent closers (dashboard, CLI, sweepers on several nodes) exactly one gets
 * the row back, and only that one reports `finished`.
 */
export async function closeGoalRow(db: Kysely<DB>, id: number, at: number): Promise<GoalRow | undefined> {
  return db.updateTable('goals').set({ is_active: 0, ended_at: at, updated_at: at }).where('id', '=', id).where('is_active', '=', 1).returningAll().executeTakeFirst();
}

/** Is any goal (of one streamer, or anyone's) past its end but still active? A read, no locks. */
export async function hasExpiredGoals(db: Kysely<DB>, now: number, userId?: number): Promise<boolean> {
  let query = db.selectFrom('goals').select('id').where('is_active', '=', 1).where('expires_at', '<=', now);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Closes goals whose `expires_at` has passed, ending them at their `expires_at`. Same single-winner
 * rule as `closeGoalRow`: a goal a concurrent sweeper already closed fails `is_active = 1` after
 * the row lock and is not returned twice.
 */
export async function closeExpiredGoalRows(db: Kysely<DB>, now: number, userId?: number): Promise<GoalRow[]> {
  let due = db.selectFrom('goals').select('id').where('is_active', '=', 1).where('expires_at', '<=', now);
  if (userId !== undefined) due = due.where('user_id', '=', userId);
  return db
    .updateTable('goals')
    .set({ is_active: 0, ended_at: sql<number>`expires_at`, updated_at: now })
    .where('id', 'in', due.orderBy('id').limit(EXPIRY_BATCH))
    .where('is_active', '=', 1)
    .where('expires_at', '<=', now)
    .returningAll()
    .execute();
}

/** A streamer's running goals, just what a donation needs to decide what to update. */
export async function activeGoalsOf(db: Kysely<DB>, userId: number): Promise<Pick<GoalRow, 'id' | 'currency' | 'expires_at'>[]> {
  return db.selectFrom('goals').select(['id', 'currency', 'expires_at']).where('user_id', '=', userId).where('is_active', '=', 1).execute();
}

/** Adds `amount` (minor units) to every running goal of the streamer in `currency`; returns them. */
export async function raiseActiveGoals(db: Kysely<DB>, userId: number, currency: string, amount: number, at: number): Promise<GoalRow[]> {
  return db
    .updateTable('goals')
    .set((eb) => ({ raised_amount: eb('raised_amount', '+', amount), updated_at: at }))
    .where('user_id', '=', userId)
    .where('is_active', '=', 1)
    .where('currency', '=', currency)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .returningAll()
    .execute();
}
