import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { pageOfStreamerSales, type StreamerSaleRow } from './sales-dashboard.repository.js';

export type { StreamerSaleRow } from './sales-dashboard.repository.js';

/** One page (1-based) of the sales credited to a streamer, newest first, for the dashboard. */
export async function streamerSales(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ rows: StreamerSaleRow[]; total: number }> {
  return pageOfStreamerSales(db, userId, { limit: perPage, offset: (page - 1) * perPage });
}
