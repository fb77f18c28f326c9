import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { hourlyJob } from '../../ops/hourly-job.js';
import { deleteUnpaidPendingBefore } from './payments.repository.js';

/**
 * How long a pending donation waits for its payment. A donor who leaves a checkout leaves a row
 * behind; the providers confirm within minutes (Stripe's Checkout Session lives 24 h at most), and
 * they retry a notification for days, so a month leaves room for the latest retry while keeping
 * abandoned checkouts from piling up. A notification for a swept donation is refused and logged
 * (`unknown_reference`) with the provider's payment id, as any unknown reference is.
 */
export const PENDING_RETENTION_MS = 30 * 24 * 3600_000;

/** Removes abandoned pending donations; what was paid stays (it links the donation to its checkout). */
export function sweepUnpaidPending(db: Kysely<DB>, now = Date.now()): Promise<number> {
  return deleteUnpaidPendingBefore(db, now - PENDING_RETENTION_MS);
}

/** The sweep of a running server: at start and hourly (src/ops/hourly-job.ts), on every node. */
export async function pendingDonationSweeper(app: FastifyInstance): Promise<void> {
  hourlyJob(app, 'abandoned pending donations', () => sweepUnpaidPending(app.ctx.db));
}
