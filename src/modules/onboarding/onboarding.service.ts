import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { firstDonationNotThrough } from '../donations/donation-stats.repository.js';
import { SANDBOX_PAYIN } from '../donations/donations.sandbox.js';
import * as repo from './onboarding.repository.js';
import { MILESTONES, type Milestone } from './onboarding.table.js';

export { MILESTONES, type Milestone } from './onboarding.table.js';

/**
 * The steps this process has already stored, per database, so the calls on busy paths (every
 * widget page load, every donor-page donation) write once per streamer and step, not on every
 * request. Another process that has not seen the step yet writes it again, which the insert ignores.
 */
const storedIn = new WeakMap<Kysely<DB>, Set<string>>();
/** Forgets everything past this many entries: a memo, never a source of truth. */
const MEMO_LIMIT = 100_000;

/**
 * Records that the streamer took a first-hour step, once:
 * - `widget_added`: a widget page (alerts, goal or poll) was opened with the streamer's token —
 *   what OBS does when the browser source is added;
 * - `test_alert_sent`: the dashboard's "send test alert" ran (the overview's or a variation's);
 * - `link_shared`: the streamer copied the donation link from the overview; a real donation (not
 *   the sandbox's) also counts — someone followed the link — and is found when the checklist is
 *   read (`onboardingChecklist`), so no donation path has to call this.
 * Durable when it returns.
 */
export async function recordMilestone(db: Kysely<DB>, userId: number, milestone: Milestone, at = Date.now()): Promise<void> {
  let stored = storedIn.get(db);
  if (!stored) storedIn.set(db, (stored = new Set()));
  const key = `${userId}:${milestone}`;
  if (stored.has(key)) return;
  await repo.insertMilestoneIfAbsent(db, userId, milestone, at);
  if (stored.size >= MEMO_LIMIT) stored.clear();
  stored.add(key);
}

/** Each step with when it was first taken, or null while it has not been. */
export type Checklist = Record<Milestone, number | null>;

/**
 * The streamer's checklist. Until `link_shared` is recorded, their first donation from a real
 * donor (any payment but the sandbox's) ticks it, dated when it arrived, and records it, so the
 * lookup runs only until then.
 */
export async function onboardingChecklist(db: Kysely<DB>, userId: number): Promise<Checklist> {
  const rows = await repo.listMilestones(db, userId);
  const list = Object.fromEntries(MILESTONES.map((m) => [m, null])) as Checklist;
  for (const row of rows) if (row.milestone in list) list[row.milestone] = Number(row.reached_at);
  if (list.link_shared === null) {
    const firstReal = await firstDonationNotThrough(db, userId, SANDBOX_PAYIN);
    if (firstReal !== undefined) {
      await recordMilestone(db, userId, 'link_shared', firstReal);
      list.link_shared = firstReal;
    }
  }
  return list;
}
