import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * One outbox row per domain event, fanned out to every channel that needs it (a donation used to be
 * written twice, once for `$alerts:` and once for `$widget:`):
 * - `channel` becomes `channels`, a JSON array of channel names; existing rows become one-element arrays;
 * - `type` names the event (`donation.created`, `goal.updated`, …) so other readers (webhooks) can use
 *   the same rows, and `user_id` whose event it is (the streamer); rows written before this
 *   migration have type '' and no user_id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('outbox').renameColumn('channel', 'channels').execute();
  await db.schema.alterTable('outbox').addColumn('type', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('outbox').addColumn('user_id', 'bigint').execute();
  if (dialectOf(db) === 'postgres') await sql`update outbox set channels = json_build_array(channels)::text`.execute(db);
  else await sql`update outbox set channels = json_array(channels)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Keeps the first channel of each event: the other deliveries of a fanned-out event are lost.
  if (dialectOf(db) === 'postgres') await sql`update outbox set channels = (channels::json)->>0`.execute(db);
  else await sql`update outbox set channels = json_extract(channels, '$[0]')`.execute(db);
  await db.schema.alterTable('outbox').dropColumn('user_id').execute();
  await db.schema.alterTable('outbox').dropColumn('type').execute();
  await db.schema.alterTable('outbox').renameColumn('channels', 'channel').execute();
}
