import type { FastifyInstance } from 'fastify';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const database = await app.ctx.database.ping();
    return reply.status(database ? 200 : 503).send({ status: database ? 'ready' : 'unavailable', database });
  });
}
