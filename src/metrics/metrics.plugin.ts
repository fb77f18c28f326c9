import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { outboxBacklog } from '../modules/outbox/outbox.repository.js';
import type { PrometheusMetrics } from './prometheus.js';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Constant-time check of `Authorization: Bearer <METRICS_TOKEN>`: both sides are hashed first, so
 * neither the content nor the length of the token leaks through timing.
 */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}

/**
 * Times every request by its route template, at the root because it truly applies to every route
 * (requests no route matched are counted as `unmatched`, never by URL: unbounded label values
 * would exhaust Prometheus). Registered before the surfaces so each of their routes gets it.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: PrometheusMetrics): void {
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    metrics.httpRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
}

/**
 * `GET /metrics` in the Prometheus text format, on the main port, for `Authorization: Bearer
 * <METRICS_TOKEN>` only. Not registered at all while METRICS_TOKEN is unset, so it is a plain 404.
 */
export function metricsRoutes(metrics: PrometheusMetrics, token: string) {
  return async function (app: FastifyInstance): Promise<void> {
    const { ctx } = app;
    metrics.setSources({
      outbox: () => outboxBacklog(ctx.db),
      sockets: () => ctx.realtime.node.socketsByProtocol(),
      subscriptions: () => ctx.realtime.node.stats().subscriptions,
    });
    app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, token)) {
        return reply
          .status(401)
          .header('WWW-Authenticate', 'Bearer realm="metrics"')
          .send({ message: 'Send Authorization: Bearer <METRICS_TOKEN> to read the metrics.' });
      }
      const { contentType, body } = await metrics.scrape();
      return reply.type(contentType).header('Cache-Control', 'no-store').send(body);
    });
  };
}
