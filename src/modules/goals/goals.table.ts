import type { Generated, Selectable } from 'kysely';

/** Donation goals (spec §2 "Donation goal"). Amounts are minor units of `currency`; times epoch ms. */
export interface GoalsTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  /** An output currency (domain/goal.ts). */
  currency: string;
  start_amount: number;
  goal_amount: number;
  /** Includes `start_amount`; grows by each donation made while the goal is active. */
  raised_amount: number;
  is_active: number;
  started_at: number;
  expires_at: number | null;
  /** When it was closed or expired; null while active. */
  ended_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface GoalTables {
  goals: GoalsTable;
}

export type GoalRow = Selectable<GoalsTable>;
