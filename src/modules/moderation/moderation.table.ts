import type { Selectable } from 'kysely';

/** A streamer's moderation settings (migration 0018); no row: no rules. */
export interface ModerationSettingsTable {
  user_id: number;
  /** JSON array of banned words and phrases, as the streamer typed them. */
  banned_words: string;
  banned_words_mode: 'mask' | 'reject';
  links: 'allow' | 'remove' | 'reject';
  /** Longest message shown, in characters; null: the service's own limit only. */
  max_message_length: number | null;
  /** Minor units of the streamer's main currency: a donation below it alerts without its message. */
  min_message_amount: number;
  /** Donor-page payments per IP address per window; null: no limit of the streamer's own. */
  ip_rate_limit: number | null;
  /** Donor-page payments per donor name per window; null: no limit. */
  donor_rate_limit: number | null;
  rate_window_seconds: number;
  /** 1: every alert waits for the streamer's approval. */
  approval_required: number;
  /** Seconds between a donation and its alert. */
  alert_delay_seconds: number;
  updated_at: number;
}

/**
 * Published: the alert went (or goes, at `publish_at`) out with the shown text. Held: waiting for
 * the streamer; no outbox row exists. Rejected: never published.
 */
export type ModerationStatus = 'published' | 'held' | 'rejected';

/** What the stream may show of one donation recorded under rules (migration 0018). */
export interface DonationModerationTable {
  donation_id: number;
  user_id: number;
  status: ModerationStatus;
  shown_username: string;
  shown_message: string;
  /** JSON array: the rules that changed the text, and why the alert is held ("approval", "rule"). */
  reasons: string;
  /** When the alert is published (the delay applied); null while held or after rejection. */
  publish_at: number | null;
  /** When the streamer approved or rejected it. */
  decided_at: number | null;
}

export interface ModerationTables {
  moderation_settings: ModerationSettingsTable;
  donation_moderation: DonationModerationTable;
}

export type ModerationSettingsRow = Selectable<ModerationSettingsTable>;
export type DonationModerationRow = Selectable<DonationModerationTable>;
