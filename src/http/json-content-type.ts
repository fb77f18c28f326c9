import type { FastifyInstance } from 'fastify';

/**
 * compatibility.md §1: JSON responses carry exactly `application/json`, no charset — a popular TS client
 * parses the body only when the header is exactly that.
 */
export function registerJsonContentType(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json') && type !== 'application/json') {
      reply.header('content-type', 'application/json');
    }
    return payload;
  });
}
