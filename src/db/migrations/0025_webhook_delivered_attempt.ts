import type { Kysely } from 'kysely';

/**
 * The attempt that delivered a message, kept on its delivery row instead of a row of its own in
 * webhook_attempts: the delivered mark rewrites that row anyway, so the log's last attempt costs
 * two columns there instead of an insert, its two index entries and its foreign-key check
 * (bench/README.md, "Issue 11: the delivered attempt on the delivery row"). Null for every delivery
 * recorded before, and for those still recorded with an attempt row: the log reads both.
 * Nullable, so a node of the previous version writes and reads the table as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_latency_ms', 'integer').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_excerpt', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_excerpt').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_latency_ms').execute();
}
