import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import { toMajor } from '../../domain/money.js';
import type { GoalRow } from './goals.table.js';

/** Spec §2 "Donation goal", field for field: the `$goals:` payload (plus `reason`). */
export interface GoalResource {
  id: number;
  is_active: number;
  title: string;
  currency: string;
  start_amount: number;
  raised_amount: number;
  goal_amount: number;
  started_at: string;
  expires_at: string | null;
}

/** What the dashboard reads (dashboard pages, CLI): the resource plus when it ended. */
export interface GoalDetails extends GoalResource {
  ended_at: string | null;
}

/** `reason` values on `$goals:` (compatibility.md §5). */
export type GoalEventReason = 'created' | 'updated' | 'finished';
export type GoalEvent = GoalResource & { reason: GoalEventReason };

export function toGoalResource(row: GoalRow): GoalResource {
  return {
    id: row.id,
    is_active: row.is_active,
    title: row.title,
    currency: row.currency,
    start_amount: toMajor(row.start_amount),
    raised_amount: toMajor(row.raised_amount),
    goal_amount: toMajor(row.goal_amount),
    started_at: formatDateTime(row.started_at),
    expires_at: formatNullableDateTime(row.expires_at),
  };
}

export function toGoalDetails(row: GoalRow): GoalDetails {
  return { ...toGoalResource(row), ended_at: formatNullableDateTime(row.ended_at) };
}
