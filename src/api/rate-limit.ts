import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { closeRedis } from '../db/redis.js';
import { bearerToken } from '../oauth/bearer.js';
import { sha256Hex } from '../security/crypto.js';

/**
 * compatibility.md §1 / spec §8: the limit is per application — the client of the bearer token. Requests
 * without a valid token (401s, token guessing, pages, the token endpoint) count per IP instead.
 * Verification is cached (token-cache.ts), so this costs no database round trip on the hot path.
 */
export async function rateLimitKey(request: FastifyRequest): Promise<string> {
  const token = bearerToken(request);
  if (token) {
    const info = await request.server.ctx.tokens.verify(token);
    if (info) return `client:${info.clientId}`;
  }
  // request.ip is undefined once the client has hung up (its socket has no address left).
  const ip = request.ip as string | undefined;
  return ip ? `ip:${normalizeIP(ip)}` : 'ip:gone';
}

/**
 * The counter store of @fastify/rate-limit, registered once at the root and shared by every
 * plugin: it limits nothing by itself — the API plugin applies `apiRateLimit` to its routes, and a
 * page opts in with its route's `config.rateLimit`. Counters live in memory on one node and in
 * Redis when REDIS_URL is set, so every node of a deployment shares them; the workers of one
 * `serve --workers N` without Redis count in their primary (`store`, src/cluster/rate-limit-store.ts).
 */
export async function registerRateLimit(app: FastifyInstance, store?: new (params: object) => object): Promise<void> {
  const { config, secrets } = app.ctx;
  let redis: Redis | undefined;
  if (config.redisUrl) {
    // Bounded waits: a slow or absent Redis must not stall every API request (see apiRateLimit).
    const { Redis } = await import('ioredis'); // only with REDIS_URL: an SQLite server never loads it
    redis = new Redis(config.redisUrl, { connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1, enableAutoPipelining: true });
    redis.on('error', (err) => app.log.warn({ err }, 'rate-limit Redis connection error'));
    const client = redis;
    app.addHook('onClose', async () => {
      await closeRedis(client);
    });
  }
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: rateLimitKey,
    // Pages that opt in with `config.rateLimit` (log-in, donor page); the API counts in apiRateLimit.
    onExceeded: (request: FastifyRequest) => app.ctx.metrics.rateLimitRejected(request.routeOptions.url ?? 'unmatched'),
    cache: 10_000,
    // One namespace per deployment (all its nodes share SECRET_KEY), so two deployments — or two
    // test apps — on one Redis never share counters.
    nameSpace: `openalerts:ratelimit:${sha256Hex(secrets.cookieSecret).slice(0, 12)}:`,
    ...(redis ? { redis } : store ? { store: store as never } : {}),
  });
}

class TooManyAttempts extends Error {
  readonly statusCode = 429;
  constructor() {
    super('Too Many Attempts.');
  }
}

/**
 * onRequest hook for /api/v1, Laravel's `throttle` headers (compatibility.md §1): every response carries
 * X-RateLimit-Limit and X-RateLimit-Remaining; over the limit a 429 `{"message":"Too Many
 * Attempts."}` (error-handler.ts) with Retry-After (seconds) and X-RateLimit-Reset (unix time).
 * CORS preflights are not counted (browsers send them on their own). If the store fails the
 * request goes through unthrottled: the limit protects the service, it must not take it down.
 */
export function apiRateLimit(app: FastifyInstance): onRequestAsyncHookHandler {
  const check = app.createRateLimit();
  return async function (request, reply) {
    if (request.method === 'OPTIONS') return;
    let limit: Awaited<ReturnType<typeof check>>;
    try {
      limit = await check(request);
    } catch (err) {
      request.log.warn({ err }, 'rate limit store unavailable; request not throttled');
      return;
    }
    if (limit.isAllowed) return;
    reply.header('X-RateLimit-Limit', limit.max);
    reply.header('X-RateLimit-Remaining', limit.remaining);
    if (limit.isExceeded) {
      app.ctx.metrics.rateLimitRejected(request.routeOptions.url ?? 'unmatched');
      const retryAfter = Math.max(1, limit.ttlInSeconds);
      reply.header('Retry-After', retryAfter);
      reply.header('X-RateLimit-Reset', Math.floor(Date.now() / 1000) + retryAfter);
      throw new TooManyAttempts();
    }
  };
}
