import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import { standings, type OptionStanding, type PollType } from '../../domain/poll.js';
import type { PollOptionRow, PollRow } from './polls.table.js';

/** Spec §2 "Poll" with its "Poll option"s, field for field: the `$polls:` payload (plus `reason`). */
export interface PollResource {
  id: number;
  is_active: number;
  title: string;
  allow_user_options: number;
  type: PollType;
  options: OptionStanding[];
}

/** What the dashboard reads (dashboard pages, CLI): the resource plus currency and times. */
export interface PollDetails extends PollResource {
  currency: string;
  started_at: string;
  ended_at: string | null;
}

/** `reason` values on `$polls:` (compatibility.md §5). */
export type PollEventReason = 'created' | 'updated' | 'finished';
export type PollEvent = PollResource & { reason: PollEventReason };

/** `options` must be the poll's options in display order (creation order). */
export function toPollResource(poll: PollRow, options: readonly PollOptionRow[]): PollResource {
  return {
    id: poll.id,
    is_active: poll.is_active,
    title: poll.title,
    allow_user_options: poll.allow_user_options,
    type: poll.type,
    options: standings(poll.type, options.map((o) => ({ id: o.id, title: o.title, votes: o.votes, sum: o.amount_sum }))),
  };
}

export function toPollDetails(poll: PollRow, options: readonly PollOptionRow[]): PollDetails {
  return { ...toPollResource(poll, options), currency: poll.currency, started_at: formatDateTime(poll.started_at), ended_at: formatNullableDateTime(poll.ended_at) };
}
