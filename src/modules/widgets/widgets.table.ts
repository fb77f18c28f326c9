import type { Generated, Insertable, Selectable } from 'kysely';

/** A streamer's secret widget token (migration 0006). */
export interface WidgetTokensTable {
  user_id: number;
  /** SHA-256 hex of the token: what requests are matched against. */
  token_hash: string;
  /** The token sealed with the app's encryption key (security/crypto encryptSecret), for the settings page. */
  token_sealed: string;
  created_at: number;
}

/** The three alert kinds the alerts widget shows (spec §1), in the order pages list them. */
export const ALERT_TYPES = ['donation', 'custom', 'merchandise-sale'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];
export const LAYOUTS = ['image-above-text', 'image-left', 'text-only'] as const;
export type AlertLayout = (typeof LAYOUTS)[number];

/** How one kind of alert looks; the widget picks the one with the highest `min_amount` ≤ the alert's amount. */
export interface AlertVariationsTable {
  id: Generated<number>;
  user_id: number;
  type: AlertType;
  name: string;
  /** Minor units of the streamer's main currency; always 0 for custom alerts (they carry no amount). */
  min_amount: number;
  duration_ms: number;
  layout: AlertLayout;
  text_template: string;
  sound_url: string | null;
  image_url: string | null;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface WidgetTables {
  widget_tokens: WidgetTokensTable;
  alert_variations: AlertVariationsTable;
}

export type AlertVariationRow = Selectable<AlertVariationsTable>;
export type NewAlertVariationRow = Insertable<AlertVariationsTable>;
