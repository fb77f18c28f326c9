import type { FastifyInstance } from 'fastify';
import { internalRoutes } from '../../web/internal/internal.routes.js';
import { startGoalSweeper, type Sweeper } from './goals.sweeper.js';

/**
 * Goals and polls in the running app: the goal-expiry sweeper (from onReady until onClose, so
 * `inject`-only tests and the CLI never start it twice) and the dashboard's internal JSON API.
 */
export async function goalsAndPolls(app: FastifyInstance): Promise<void> {
  let sweeper: Sweeper | null = null;
  app.addHook('onReady', async () => {
    sweeper = startGoalSweeper(app.ctx.db, { onError: (err) => app.log.error({ err }, 'goal expiry sweep failed') });
  });
  app.addHook('onClose', async () => {
    await sweeper?.stop();
  });
  await app.register(internalRoutes, { prefix: '/internal' });
}
