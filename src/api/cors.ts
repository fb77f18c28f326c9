import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * INTEROP §1: the API and the token endpoints take cross-origin calls (implicit-grant apps run in
 * browsers; centrifuge-js 2.x calls /api/v1/centrifuge/subscribe with credentials and
 * X-Requested-With). We answer with the request's exact Origin — never `*`, which browsers refuse
 * with credentials — and allow the headers those clients send. Pages get no CORS at all.
 */
const CORS_PATHS = ['/oauth/token', '/oauth/revoke', '/.well-known/oauth-authorization-server'];

export function isCorsPath(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  return path === '/api/v1' || path.startsWith('/api/v1/') || CORS_PATHS.includes(path);
}

const ENABLED: FastifyCorsOptions = {
  origin: true,
  credentials: true,
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['Authorization', 'Content-Type', 'X-Requested-With', 'Accept'],
  // Browser apps read the limit headers (INTEROP §1) and the RFC 6750 challenge.
  exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'WWW-Authenticate'],
  maxAge: 600,
  // A bare OPTIONS on an API path gets the CORS answer, not a text/plain 400.
  strictPreflight: false,
};
const DISABLED: FastifyCorsOptions = { origin: false };

/** Registered at the root (the plugin is not encapsulated), so it covers routes of every module. */
export async function registerApiCors(app: FastifyInstance): Promise<void> {
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      callback(null, isCorsPath(request.url) ? ENABLED : DISABLED);
    },
  });
}
