import type { Generated, Selectable } from 'kysely';

/**
 * A file a streamer uploaded for their alerts (migration 0016), checked by its content. Stored in
 * the database so that every node serves it and backups carry it; immutable — the same content
 * is one row per streamer, named by its SHA-256.
 */
export interface AlertMediaTable {
  id: Generated<number>;
  user_id: number;
  /** Hex SHA-256 of `data`: the public name of the file (`/media/<sha256>.<ext>`) and its ETag. */
  sha256: string;
  /** What the content was recognised as (never what the uploader claimed). */
  content_type: string;
  byte_size: number;
  data: Buffer;
  created_at: number;
}

export interface MediaTables {
  alert_media: AlertMediaTable;
}

export type AlertMediaRow = Selectable<AlertMediaTable>;
