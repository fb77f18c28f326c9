import type { FastifyInstance } from 'fastify';
import { alwaysJson, errorHandler, notFoundHandler } from '../http/error-handler.js';
import { profileRoutes } from '../modules/accounts/profile.routes.js';
import { customAlertRoutes } from '../modules/custom-alerts/custom-alerts.routes.js';
import { donationRoutes } from '../modules/donations/donations.routes.js';
import { signedIntakeRoutes } from '../modules/payments/signed-intake.js';
import { merchandiseRoutes } from '../modules/merchandise/merchandise.routes.js';
import { webhookRoutes } from '../modules/webhooks/webhooks.routes.js';
import { centrifugeSubscribeRoutes } from '../realtime/subscribe.routes.js';
import { declaredBodyLimit } from './body-limit.js';
import { allowCrossOrigin } from './cors.js';
import { apiRateLimit } from './rate-limit.js';

/**
 * Everything under /api/v1 ({base_url} of the spec), registered with that prefix. Its routes get,
 * in this order: CORS (so preflights are answered first and every answer, a 429 included, carries
 * the headers), the per-application rate limit (compatibility.md §1), the body limit for every content
 * type; errors and 404s in the compatibility.md §1 JSON shapes whatever the client accepts. No cookies: the
 * API authenticates by bearer token only. Add a module's API routes with one `app.register` line.
 */
export async function apiV1Routes(app: FastifyInstance): Promise<void> {
  await allowCrossOrigin(app);
  app.decorateRequest('auth', null);
  app.addHook('onRequest', apiRateLimit(app));
  app.addHook('onRequest', declaredBodyLimit(app));
  app.setErrorHandler(errorHandler(alwaysJson));
  app.setNotFoundHandler(notFoundHandler(alwaysJson));

  await app.register(profileRoutes);
  await app.register(donationRoutes);
  await app.register(customAlertRoutes);
  await app.register(merchandiseRoutes);
  await app.register(centrifugeSubscribeRoutes);
  await app.register(webhookRoutes);
  await app.register(signedIntakeRoutes);
}
