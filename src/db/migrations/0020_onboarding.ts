import type { Kysely } from 'kysely';

/**
 * onboarding_milestones: the first-hour steps a streamer has taken (issue 15), one row per step,
 * written once when the step first happens (adding a widget to OBS, sending a test alert, sharing
 * the donation link). The dashboard checklist ticks from these rows; nothing else reads them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('onboarding_milestones')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('milestone', 'text', (c) => c.notNull())
    .addColumn('reached_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('onboarding_milestones_pk', ['user_id', 'milestone'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('onboarding_milestones').execute();
}
