import type { Generated, Selectable } from 'kysely';
import type { PollType } from '../../domain/poll.js';

/** Polls (spec §2 "Poll"); at most one active per streamer (partial unique index). */
export interface PollsTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  type: PollType;
  /** Currency `sum` polls add donations up in (an output currency). */
  currency: string;
  allow_user_options: number;
  is_active: number;
  started_at: number;
  ended_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Spec §2 "Poll option"; both tallies are kept whatever the poll type. */
export interface PollOptionsTable {
  id: Generated<number>;
  poll_id: number;
  title: string;
  /** Dedupe key (domain/poll.ts `optionTitleKey`), unique per poll. */
  title_key: string;
  votes: Generated<number>;
  /** Minor units of the poll's currency. */
  amount_sum: Generated<number>;
  /** 1 when a donor added it with a vote. */
  added_by_donor: Generated<number>;
  created_at: number;
}

export interface PollTables {
  polls: PollsTable;
  poll_options: PollOptionsTable;
}

export type PollRow = Selectable<PollsTable>;
export type PollOptionRow = Selectable<PollOptionsTable>;
