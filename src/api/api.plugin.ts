import type { FastifyInstance } from 'fastify';
import { alwaysJson, errorHandler } from '../http/error-handler.js';
import { docsRoutes } from './openapi.js';
import { apiV1Routes } from './v1.routes.js';

/**
 * The public HTTP API: /api/v1 (CORS, rate limit, bearer tokens) and its documentation
 * (/openapi.json, /docs). Errors are JSON (compatibility.md §1). The OpenAPI collector itself is registered
 * at the root (openapi.ts), since it documents the OAuth server's routes too.
 */
export async function apiPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(errorHandler(alwaysJson));
  await app.register(docsRoutes);
  await app.register(apiV1Routes, { prefix: '/api/v1' });
}
