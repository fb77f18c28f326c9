import type { FastifyInstance } from 'fastify';
import { webhookLogPruner } from './webhooks.pruning.js';

/**
 * Runs the app's webhook dispatcher from onReady until onClose (a child plugin: it stops before the
 * database closes). Deliveries in flight finish or time out before close resolves. The delivery
 * log's pruning runs beside it.
 */
export async function webhookDispatcherPlugin(app: FastifyInstance): Promise<void> {
  const dispatcher = app.ctx.webhooks;
  app.addHook('onReady', async () => dispatcher.start());
  app.addHook('onClose', async () => dispatcher.stop());
  await webhookLogPruner(app);
}
