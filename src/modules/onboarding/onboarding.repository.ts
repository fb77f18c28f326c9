import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Milestone } from './onboarding.table.js';

/** Records the step unless it already is: the first time stays. */
export async function insertMilestoneIfAbsent(db: Kysely<DB>, userId: number, milestone: Milestone, at: number): Promise<void> {
  await db
    .insertInto('onboarding_milestones')
    .values({ user_id: userId, milestone, reached_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'milestone']).doNothing())
    .execute();
}

export async function listMilestones(db: Kysely<DB>, userId: number): Promise<{ milestone: Milestone; reached_at: number }[]> {
  return db.selectFrom('onboarding_milestones').select(['milestone', 'reached_at']).where('user_id', '=', userId).execute();
}
