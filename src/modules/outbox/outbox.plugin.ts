import type { FastifyInstance } from 'fastify';

/**
 * Runs the app's outbox relay from onReady until onClose. onReady waits for its first round, so
 * the server listens only once what was pending is published. A child plugin, so its onClose runs
 * before the root's: the relay stops before the broker it publishes to closes.
 */
export async function outboxRelayPlugin(app: FastifyInstance): Promise<void> {
  const relay = app.ctx.relay;
  app.addHook('onReady', async () => relay.start());
  app.addHook('onClose', async () => relay.stop());
}
