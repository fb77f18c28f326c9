import type { Generated } from 'kysely';

/**
 * Domain events, written in the same transaction as the change they report and published after
 * commit (architecture.md convention 1: at-least-once; the broker assigns per-channel offsets). One row per event, however
 * many channels it goes to.
 */
export interface OutboxTable {
  id: Generated<number>;
  /** What happened (`donation.created`, `goal.updated`, …; see events.ts); '' for rows older than types. */
  type: Generated<string>;
  /** The streamer the event belongs to; null for rows older than types. */
  user_id: number | null;
  /** JSON array of the real-time channels the event is published to. */
  channels: string;
  /** The publication payload as JSON text: sent to subscribers byte for byte, never re-encoded. */
  payload: string;
  created_at: number;
  /** The node process that claimed the row for publishing (SQLite); null while pending. */
  claimed_by: string | null;
  claimed_at: number | null;
  published_at: number | null;
  /** JSON array of the offset each channel gave the event, in `channels` order (recorded for the
   * in-memory broker, whose history lives here; else null). */
  offsets: string | null;
  /** Not published before this time (ms; an alert delay, migration 0018); null: at once. */
  not_before: Generated<number | null>;
  /** When the webhooks fan-out turned the event into deliveries (modules/webhooks); null: not yet. */
  webhooks_at: number | null;
}

/** A channel's stream position, for the in-memory broker: its epoch and offsets survive restarts. */
export interface ChannelStreamTable {
  channel: string;
  epoch: string;
  top_offset: number;
  updated_at: number;
}

export interface OutboxTables {
  outbox: OutboxTable;
  channel_streams: ChannelStreamTable;
}
