import type { FastifyInstance } from 'fastify';
import { sendJsonError } from '../http/error-handler.js';
import { profileRoutes } from '../modules/accounts/profile.routes.js';
import { customAlertRoutes } from '../modules/custom-alerts/custom-alerts.routes.js';
import { donationRoutes } from '../modules/donations/donations.routes.js';
import { merchandiseRoutes } from '../modules/merchandise/merchandise.routes.js';
import { centrifugeSubscribeRoutes } from '../realtime/subscribe.routes.js';
import { declaredBodyLimit } from './body-limit.js';
import { apiRateLimit } from './rate-limit.js';

/**
 * Everything under /api/v1 ({base_url} of the spec). Routes registered here get the per-application
 * rate limit (INTEROP §1), the body limit for every content type, and JSON 404s that carry the
 * limit headers too; CORS and OpenAPI cover them from the root. Add a module's API routes with one
 * `app.register` line below.
 */
export async function apiV1Routes(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', apiRateLimit(app));
  app.addHook('onRequest', declaredBodyLimit(app));
  app.setNotFoundHandler((request, reply) => sendJsonError(reply, 404, { message: `No route for ${request.method} ${request.url.split('?')[0]}.` }));

  await app.register(profileRoutes);
  await app.register(donationRoutes);
  await app.register(customAlertRoutes);
  await app.register(merchandiseRoutes);
  await app.register(centrifugeSubscribeRoutes);
}
