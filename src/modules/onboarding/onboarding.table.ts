/** The first-hour steps the dashboard checklist names, in the order it shows them. */
export const MILESTONES = ['widget_added', 'test_alert_sent', 'link_shared'] as const;
export type Milestone = (typeof MILESTONES)[number];

/** One step a streamer has taken, recorded the first time it happened (migration 0020). */
export interface OnboardingMilestonesTable {
  user_id: number;
  milestone: Milestone;
  /** Epoch milliseconds of the first time. */
  reached_at: number;
}

export interface OnboardingTables {
  onboarding_milestones: OnboardingMilestonesTable;
}
