import type { Generated, Insertable, Selectable } from 'kysely';

/** Spec §2 "Custom alert", sent by an application (`client_id`) to a streamer (`user_id`). */
export interface CustomAlertsTable {
  id: Generated<number>;
  user_id: number;
  client_id: number;
  /** Unique per (client_id, user_id) when present (spec 4.3). */
  external_id: string | null;
  header: string | null;
  message: string | null;
  image_url: string | null;
  sound_url: string | null;
  is_shown: number;
  created_at: number;
  /** Null while is_shown is 0 (spec §3). */
  shown_at: number | null;
}

export interface CustomAlertTables {
  custom_alerts: CustomAlertsTable;
}

export type CustomAlertRow = Selectable<CustomAlertsTable>;
export type NewCustomAlertRow = Insertable<CustomAlertsTable>;
