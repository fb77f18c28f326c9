import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

type Db = Kysely<DB>;

/** The streamer's row for this content, inserted unless they uploaded the same bytes before. */
export async function insertMediaIfAbsent(db: Db, row: { user_id: number; sha256: string; content_type: string; byte_size: number; data: Buffer; created_at: number }): Promise<number> {
  await db.insertInto('alert_media').values(row).onConflict((oc) => oc.columns(['user_id', 'sha256']).doNothing()).execute();
  const found = await db.selectFrom('alert_media').select('id').where('user_id', '=', row.user_id).where('sha256', '=', row.sha256).executeTakeFirstOrThrow();
  return found.id;
}

/** One file by its content hash, for serving (any streamer's copy: the bytes are the same). */
export async function findMediaBySha(db: Db, sha256: string): Promise<{ content_type: string; data: Buffer } | undefined> {
  return db.selectFrom('alert_media').select(['content_type', 'data']).where('sha256', '=', sha256).limit(1).executeTakeFirst();
}

/** What the widget and pages need to link media, without the bytes. */
export async function mediaInfo(db: Db, ids: number[]): Promise<Map<number, { sha256: string; content_type: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('alert_media').select(['id', 'sha256', 'content_type']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, { sha256: r.sha256, content_type: r.content_type }]));
}

/** Deletes the streamer's files no variation uses any more (after a replace or a delete). */
export async function deleteUnusedMedia(db: Db, userId: number): Promise<void> {
  await db
    .deleteFrom('alert_media')
    .where('user_id', '=', userId)
    .where(({ not, exists, selectFrom, or }) =>
      not(exists(selectFrom('alert_variations').select('alert_variations.id').where(({ eb, ref }) =>
        eb.and([eb('alert_variations.user_id', '=', userId), or([eb('alert_variations.image_media_id', '=', ref('alert_media.id')), eb('alert_variations.sound_media_id', '=', ref('alert_media.id'))])]),
      ))),
    )
    .execute();
}
