import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import {
  amountField,
  checkGoalAmounts,
  expiresAtField,
  GOAL_LIMITS,
  goalContribution,
  isExpired,
  MAX_ACTIVE_GOALS,
  raisedAfterStartChange,
  titleField,
  validateNewGoal,
  type FieldErrors,
  type GoalInput,
} from '../../domain/goal.js';
import { ConflictError, msg, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { RateTable } from '../../domain/rates.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import * as repo from './goals.repository.js';
import { toGoalDetails, toGoalResource, type GoalDetails, type GoalEvent, type GoalEventReason } from './goals.resource.js';
import type { GoalRow } from './goals.table.js';

export type { GoalInput } from '../../domain/goal.js';

/** Fields the dashboard may change. The currency is fixed: raised money was converted into it. */
export interface GoalPatch {
  title?: unknown;
  startAmount?: unknown;
  goalAmount?: unknown;
  /** null or '' removes the end date. */
  expiresAt?: unknown;
}

export interface GoalListOptions {
  state?: repo.GoalState;
  limit?: number;
}

/** A donation as goals see it: minor units of an input currency, at its creation time. */
export interface DonationForGoals {
  userId: number;
  amount: number;
  currency: string;
  at: number;
}

/** Queues a `$goals:goal_<user_id>` publication: the spec §2 resource plus `reason` (compatibility.md §5). */
async function publish(tx: Kysely<DB>, row: GoalRow, reason: GoalEventReason): Promise<void> {
  const event: GoalEvent = { ...toGoalResource(row), reason };
  await enqueueEvent(tx, { type: `goal.${reason}`, userId: row.user_id, payload: event });
}

async function activeStreamer(db: Kysely<DB>, userId: number) {
  const user = await findStreamer(db, userId);
  if (!user || !user.is_active) throw new NotFoundError(msg('err.streamer.not_found'));
  return user;
}

/** A goal of the given streamer (when one is named), else 404 — never another streamer's goal. */
async function ownGoal(db: Kysely<DB>, id: number, userId?: number): Promise<GoalRow> {
  const row = await repo.findGoal(db, id);
  if (!row || (userId !== undefined && row.user_id !== userId)) throw new NotFoundError(msg('err.goal.not_found'));
  return row;
}

/**
 * Ends goals whose `expires_at` has passed (all streamers, or one) and queues one `finished` per
 * goal, in one transaction. Safe with any number of concurrent callers on any number of nodes:
 * the closing UPDATE decides, so each goal finishes exactly once. Returns the goals it ended.
 */
export async function expireGoals(db: Kysely<DB>, now = Date.now(), userId?: number): Promise<GoalRow[]> {
  // Cheap read first, so an idle sweep never takes SQLite's write lock.
  if (!(await repo.hasExpiredGoals(db, now, userId))) return [];
  return db.transaction().execute((tx) => expireGoalsIn(tx, now, userId));
}

async function expireGoalsIn(tx: Kysely<DB>, now: number, userId?: number): Promise<GoalRow[]> {
  const ended = await repo.closeExpiredGoalRows(tx, now, userId);
  for (const row of ended) await publish(tx, row, 'finished');
  return ended;
}

export async function createGoal(db: Kysely<DB>, userId: number, input: GoalInput): Promise<GoalDetails> {
  return db.transaction().execute(async (tx) => {
    const user = await activeStreamer(tx, userId);
    const now = Date.now();
    const checked = validateNewGoal(input, { defaultCurrency: user.currency, now });
    if ('errors' in checked) throw new ValidationError(checked.errors);
    await expireGoalsIn(tx, now, user.id);
    if ((await repo.countActiveGoals(tx, user.id)) >= MAX_ACTIVE_GOALS) {
      throw new ConflictError(msg('err.goal.too_many', { max: MAX_ACTIVE_GOALS }));
    }
    const { fields } = checked;
    const row = await repo.insertGoal(tx, {
      user_id: user.id,
      title: fields.title,
      currency: fields.currency,
      start_amount: fields.startAmount,
      goal_amount: fields.goalAmount,
      raised_amount: fields.startAmount,
      is_active: 1,
      started_at: now,
      expires_at: fields.expiresAt,
      ended_at: null,
      created_at: now,
      updated_at: now,
    });
    await publish(tx, row, 'created');
    return toGoalDetails(row);
  });
}

/** Edits a running goal and reports `updated`. An ended goal cannot change (409). */
export async function updateGoal(db: Kysely<DB>, userId: number, goalId: number, patch: GoalPatch): Promise<GoalDetails> {
  const now = Date.now();
  const outcome = await db.transaction().execute(async (tx) => {
    const existing = await ownGoal(tx, goalId, userId);
    // Expired but not yet swept: end it now (and keep that), then refuse the edit.
    if (existing.is_active && (await expireGoalsIn(tx, now, userId)).some((g) => g.id === goalId)) return 'ended' as const;
    const row = await repo.lockActiveGoal(tx, goalId, now);
    if (!row) return 'ended' as const;

    const errors: FieldErrors = {};
    const title = patch.title === undefined ? row.title : titleField(errors, 'title', patch.title, GOAL_LIMITS.title);
    const startAmount = patch.startAmount === undefined ? row.start_amount : amountField(errors, 'start_amount', patch.startAmount);
    const goalAmount = patch.goalAmount === undefined ? row.goal_amount : amountField(errors, 'goal_amount', patch.goalAmount);
    if (startAmount !== undefined && goalAmount !== undefined && (patch.startAmount !== undefined || patch.goalAmount !== undefined)) {
      checkGoalAmounts(errors, startAmount, goalAmount);
    }
    const expiresAt = patch.expiresAt === undefined ? row.expires_at : expiresAtField(errors, patch.expiresAt, now);
    if (Object.keys(errors).length) throw new ValidationError(errors);

    const updated = await repo.updateGoalRow(tx, goalId, {
      title: title!,
      start_amount: startAmount!,
      goal_amount: goalAmount!,
      raised_amount: raisedAfterStartChange(row.raised_amount, row.start_amount, startAmount!),
      expires_at: expiresAt!,
      updated_at: now,
    });
    await publish(tx, updated, 'updated');
    return updated;
  });
  if (outcome === 'ended') throw new ConflictError(msg('err.goal.ended'));
  return toGoalDetails(outcome);
}

/**
 * Ends a goal now and reports `finished`. Closing an ended goal is a no-op that returns it (no
 * second event). Without `userId` (the CLI, an operator) any streamer's goal may be closed.
 */
export async function closeGoal(db: Kysely<DB>, goalId: number, opts: { userId?: number } = {}): Promise<GoalDetails> {
  return db.transaction().execute(async (tx) => {
    const existing = await ownGoal(tx, goalId, opts.userId);
    const now = Date.now();
    await expireGoalsIn(tx, now, existing.user_id);
    const closed = await repo.closeGoalRow(tx, goalId, now);
    if (closed) await publish(tx, closed, 'finished');
    return toGoalDetails(closed ?? (await ownGoal(tx, goalId)));
  });
}

export async function getGoal(db: Kysely<DB>, goalId: number, opts: { userId?: number } = {}): Promise<GoalDetails> {
  const row = await ownGoal(db, goalId, opts.userId);
  if (row.is_active && row.expires_at !== null && row.expires_at <= Date.now()) {
    await expireGoals(db, Date.now(), row.user_id);
    return toGoalDetails(await ownGoal(db, goalId));
  }
  return toGoalDetails(row);
}

/** A streamer's goals, newest first; goals past their end are closed first, so the list is current. */
export async function listGoals(db: Kysely<DB>, userId: number, opts: GoalListOptions = {}): Promise<GoalDetails[]> {
  await expireGoals(db, Date.now(), userId);
  const rows = await repo.listGoalRows(db, userId, { state: opts.state ?? 'all', limit: Math.min(Math.max(opts.limit ?? 50, 1), 100) });
  return rows.map(toGoalDetails);
}

/**
 * Called inside the donation's transaction (donations.service): ends the streamer's goals that
 * have expired by the donation's time, then adds the donation, converted into each goal's
 * currency, to every goal still running, and queues `finished` / `updated` events — all of which
 * commit or roll back with the donation itself.
 */
export async function raiseGoalsForDonation(tx: Kysely<DB>, donation: DonationForGoals, rates: RateTable): Promise<void> {
  // One read on the hot path; most streamers run no goal at all.
  const running = await repo.activeGoalsOf(tx, donation.userId);
  if (!running.length) return;
  if (running.some((g) => isExpired(g.expires_at, donation.at))) await expireGoalsIn(tx, donation.at, donation.userId);
  const raised: GoalRow[] = [];
  for (const currency of new Set(running.filter((g) => !isExpired(g.expires_at, donation.at)).map((g) => g.currency))) {
    const amount = goalContribution(donation.amount, donation.currency, currency, rates);
    if (amount > 0) raised.push(...(await repo.raiseActiveGoals(tx, donation.userId, currency, amount, donation.at)));
  }
  raised.sort((a, b) => a.id - b.id);
  for (const row of raised) await publish(tx, row, 'updated');
}
