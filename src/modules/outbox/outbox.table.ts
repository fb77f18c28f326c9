import type { Generated } from 'kysely';

/**
 * Events written in the same transaction as the change they report, published after commit
 * (DESIGN: at-least-once; the broker assigns per-channel offsets).
 */
export interface OutboxTable {
  id: Generated<number>;
  channel: string;
  /** JSON of the publication payload. */
  payload: string;
  created_at: number;
  /** Set by the node that claimed the row for publishing; null while pending. */
  claimed_by: string | null;
  claimed_at: number | null;
  published_at: number | null;
}

export interface OutboxTables {
  outbox: OutboxTable;
}
