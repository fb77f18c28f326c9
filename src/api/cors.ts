import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * compatibility.md §1: the API and the token endpoints take cross-origin calls (implicit-grant apps run in
 * browsers; centrifuge-js 2.x calls /api/v1/centrifuge/subscribe with credentials and
 * X-Requested-With). We answer with the request's exact Origin — never `*`, which browsers refuse
 * with credentials — and allow the headers those clients send. Pages get no CORS at all.
 *
 * Registered inside the plugin that owns the cross-origin routes, and only in a plugin whose
 * prefix covers exactly them: @fastify/cors answers preflights through its own `OPTIONS
 * <prefix>*` route, so a plugin without a prefix would answer preflights for every path.
 */
export async function allowCrossOrigin(app: FastifyInstance): Promise<void> {
  await app.register(cors, {
    origin: true,
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Requested-With', 'Accept'],
    // Browser apps read the limit headers (compatibility.md §1) and the RFC 6750 challenge.
    exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
    // A bare OPTIONS on an API path gets the CORS answer, not a text/plain 400.
    strictPreflight: false,
  });
}
