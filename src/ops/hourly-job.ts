import type { FastifyInstance } from 'fastify';

const HOUR_MS = 3600_000;
/**
 * How long after ready the first round waits. Nothing housekeeping removes is urgent, and a
 * server that has just started has requests to answer first (its readiness, its first pages): the
 * rounds' first queries compile and run on the same thread.
 */
export const FIRST_ROUND_DELAY_MS = 1000;

/**
 * Housekeeping of a running server (deleting what has outlived its retention): once shortly after
 * start, then hourly, from onReady until onClose — so `inject`-only tests and CLI commands never
 * start it, and close waits for a round in progress. Rounds never overlap. Every node may run the
 * same job: a delete of old rows done twice deletes them once. A failed round is logged and tried
 * again next hour; `job` answers how many rows it removed (logged when there were any).
 */
export function hourlyJob(app: FastifyInstance, what: string, job: () => Promise<number>, intervalMs = HOUR_MS, firstRoundMs = FIRST_ROUND_DELAY_MS): void {
  let timers: NodeJS.Timeout[] = [];
  let running: Promise<unknown> | null = null;
  const round = () => {
    if (running) return;
    running = job()
      .then((count) => count > 0 && app.log.info({ count }, `${what}: removed`))
      .catch((err: unknown) => app.log.error({ err }, `${what} failed; will retry in an hour`))
      .finally(() => (running = null));
  };
  app.addHook('onReady', async () => {
    timers = [setTimeout(round, firstRoundMs), setInterval(round, intervalMs)];
    for (const timer of timers) timer.unref();
  });
  app.addHook('onClose', async () => {
    for (const timer of timers) clearTimeout(timer);
    await running;
  });
}
