import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { expireGoals } from './goals.service.js';

/** How often a node looks for goals past their `expires_at`. One indexed read when there are none. */
export const GOAL_SWEEP_INTERVAL_MS = 1000;

export interface Sweeper {
  /** Stops the timer and waits for a sweep in progress, so the database can close after it. */
  stop(): Promise<void>;
}

/**
 * Ends expired goals periodically (their `finished` event goes out through the outbox). Every node
 * runs one; `expireGoals` lets exactly one of them end each goal. A failed sweep is reported and
 * retried on the next tick.
 */
export function startGoalSweeper(db: Kysely<DB>, opts: { intervalMs?: number; onError: (err: unknown) => void }): Sweeper {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = expireGoals(db)
      .then(() => undefined, opts.onError)
      .finally(() => {
        running = null;
      });
  };
  // The first sweep comes one interval after start, not at once: a goal that ended while the
  // server was down ends a second later, and a starting server answers its first requests first.
  const timer = setInterval(tick, opts.intervalMs ?? GOAL_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
