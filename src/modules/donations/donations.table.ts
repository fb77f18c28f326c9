import type { Generated, Selectable } from 'kysely';

export interface DonationsTable {
  id: Generated<number>;
  user_id: number;
  username: string;
  message_type: 'text' | 'audio';
  message: string;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  /** Minor units of `user_currency`, converted at the rate of the moment. */
  amount_in_user_currency: number;
  user_currency: string;
  /** Payment provider title, or null. */
  payin_system: string | null;
  is_shown: number;
  created_at: number;
  shown_at: number | null;
  /** The poll option this donation voted for (migration 0005), or null. */
  poll_option_id: number | null;
}

export interface DonationTables {
  donations: DonationsTable;
  donation_counters: DonationCountersTable;
}

export type DonationRow = Selectable<DonationsTable>;

/** Maintained by triggers (migration 0015): never written by application code. */
export interface DonationCountersTable {
  user_id: number;
  /** How many donations the streamer has. */
  total: number;
  /** Changes with every write to one of the streamer's donations, in that write's transaction. */
  version: number;
}
