import type { FastifyInstance } from 'fastify';
import { registerApiCors } from './cors.js';
import { registerOpenApi } from './openapi.js';
import { registerRateLimit } from './rate-limit.js';
import { apiV1Routes } from './v1.routes.js';

/**
 * The public HTTP API: rate limiting (for the whole app), CORS for the API and token endpoints,
 * the OpenAPI document and docs, and the /api/v1 routes. Called from buildApp before any other
 * routes are added, so OpenAPI and the rate-limit route option see them all.
 */
export async function registerApi(app: FastifyInstance): Promise<void> {
  await registerRateLimit(app);
  await registerApiCors(app);
  await registerOpenApi(app);
  await app.register(apiV1Routes, { prefix: '/api/v1' });
}
