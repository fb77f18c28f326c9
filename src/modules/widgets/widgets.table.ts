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
/** Where a variation's image or sound comes from: nothing, the bundled default, an http(s) URL, or an upload (alert_media). */
export const MEDIA_SOURCES = ['none', 'default', 'url', 'upload'] as const;
export type MediaSource = (typeof MEDIA_SOURCES)[number];
/** CSS animations the widget has (widget.css `.enter-*` / `.exit-*`); reduced motion turns them into a plain fade. */
export const ANIMATIONS = ['fade', 'slide-down', 'slide-up', 'zoom', 'bounce', 'none'] as const;
export type AlertAnimation = (typeof ANIMATIONS)[number];
/** Font stacks installed with every OBS (no web fonts are loaded: the widget stays on our origin). */
export const FONTS = ['system', 'serif', 'monospace', 'rounded', 'impact'] as const;
export type AlertFont = (typeof FONTS)[number];

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
  /** The http(s) URL used when `sound_source` is `url`. */
  sound_url: string | null;
  /** The http(s) URL used when `image_source` is `url`. */
  image_url: string | null;
  enabled: number;
  created_at: number;
  updated_at: number;
  /** Migration 0016 onwards. */
  image_source: Generated<MediaSource>;
  /** The uploaded file used when `image_source` is `upload` (alert_media; an image, GIF or WebM video). */
  image_media_id: number | null;
  sound_source: Generated<MediaSource>;
  sound_media_id: number | null;
  /** 0–100 (%). */
  sound_volume: Generated<number>;
  enter_animation: Generated<AlertAnimation>;
  exit_animation: Generated<AlertAnimation>;
  font_family: Generated<AlertFont>;
  /** CSS pixels of the title; the message is 0.8 of it. */
  font_size: Generated<number>;
  /** `#rrggbb`. */
  title_color: Generated<string>;
  message_color: Generated<string>;
  /** 1: the donor's message is read aloud (browser speech synthesis) after the alert sound. */
  tts_enabled: Generated<number>;
  /** A speechSynthesis voice name; '' lets the browser pick one for the streamer's language. */
  tts_voice: Generated<string>;
  /** Speech rate in % (50–200; 100 is normal). */
  tts_rate: Generated<number>;
  /** 0–100 (%). */
  tts_volume: Generated<number>;
  /** Minor units of the streamer's currency: smaller alerts are not read aloud. */
  tts_min_amount: Generated<number>;
}

export interface WidgetTables {
  widget_tokens: WidgetTokensTable;
  alert_variations: AlertVariationsTable;
}

export type AlertVariationRow = Selectable<AlertVariationsTable>;
export type NewAlertVariationRow = Insertable<AlertVariationsTable>;
