import type { FastifyInstance } from 'fastify';
import { webhookLogPruner } from './webhooks.pruning.js';

/**
 * Runs the app's webhook dispatcher from onReady until onClose (a child plugin: it stops before the
 * database closes). Deliveries in flight finish or time out before close resolves. The delivery
 * log's pruning runs beside it. The server does not wait for a first round to listen: deliveries
 * left from before the start go out from the first poll, a moment later.
 */
export async function webhookDispatcherPlugin(app: FastifyInstance): Promise<void> {
  const dispatcher = app.ctx.webhooks;
  app.addHook('onReady', async () => dispatcher.start('poll'));
  app.addHook('onClose', async () => dispatcher.stop());
  await webhookLogPruner(app);
}
