import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { hourlyJob } from '../../ops/hourly-job.js';
import * as repo from './webhooks.repository.js';

/** Deliveries deleted per transaction: a few milliseconds of write lock on SQLite, then requests go first. */
export const PRUNE_BATCH = 500;

/**
 * Deletes the delivery log older than the retention (WEBHOOKS_LOG_RETENTION): finished deliveries
 * (delivered, failed, cancelled) with their attempts, oldest first, `batch` rows per short
 * transaction with a turn of the event loop between them, so no lock is held for long and the
 * requests' writes interleave. Then removed subscriptions with nothing left in their log. Pending
 * deliveries stay whatever their age (a disabled subscription's queue waits for its re-enabling).
 * Answers how many deliveries went.
 */
export async function pruneWebhookLog(db: Kysely<DB>, retentionMs: number, now = Date.now(), batch = PRUNE_BATCH): Promise<number> {
  const before = now - retentionMs;
  let deleted = 0;
  for (;;) {
    const ids = await repo.finishedDeliveriesBefore(db, before, batch);
    if (ids.length > 0) await db.transaction().execute((tx) => repo.deleteDeliveries(tx, ids));
    deleted += ids.length;
    if (ids.length < batch) break;
    await yieldToLoop();
  }
  await repo.deleteRemovedSubscriptions(db, before);
  return deleted;
}

/** The pruning of a running server: at start and hourly (src/ops/hourly-job.ts), on every node. */
export async function webhookLogPruner(app: FastifyInstance): Promise<void> {
  hourlyJob(app, 'webhooks: old delivery log entries', () => pruneWebhookLog(app.ctx.db, app.ctx.config.webhooks.logRetentionMs));
}
