import type { Kysely } from 'kysely';

/**
 * The webhook delivery log is pruned (WEBHOOKS_LOG_RETENTION): finished deliveries older than the
 * retention go, oldest first, a batch at a time. This index makes each batch a range read of the
 * oldest finished rows instead of a scan of the whole log.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_finished').on('webhook_deliveries').column('finished_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_finished').execute();
}
