import type { FastifyInstance } from 'fastify';
import { startGoalSweeper, type Sweeper } from './goals.sweeper.js';

/**
 * The goal-expiry sweeper of a running server: from onReady until onClose, so `inject`-only tests
 * and the CLI never start it twice.
 */
export async function goalSweeper(app: FastifyInstance): Promise<void> {
  let sweeper: Sweeper | null = null;
  app.addHook('onReady', async () => {
    sweeper = startGoalSweeper(app.ctx.db, { onError: (err) => app.log.error({ err }, 'goal expiry sweep failed') });
  });
  app.addHook('onClose', async () => {
    await sweeper?.stop();
  });
}
