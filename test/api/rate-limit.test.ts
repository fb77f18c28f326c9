import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { apiRateLimit, registerRateLimit } from '../../src/api/rate-limit.js';
import type { AppContext } from '../../src/app-context.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { makeApp, REDIS_URL, redisAvailable, testConfig } from '../helper.js';
import { apiFixture, json, type ApiFixture } from './helpers.js';

const LIMIT = 5;

for (const store of ['memory', 'redis'] as const) {
  describe(`rate limit per application, ${store} store (compatibility.md §1)`, async () => {
    const skip = store === 'redis' && !(await redisAvailable()) ? 'Redis not reachable' : false;
    let f: ApiFixture;
    before(async () => {
      if (skip) return;
      f = await apiFixture({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...(store === 'redis' ? { REDIS_URL } : {}) } });
    });
    after(async () => {
      if (!skip) await f.close();
    });

    test('every response carries the limit headers; the request after the limit is a 429 with Retry-After and X-RateLimit-Reset', { skip }, async () => {
      // Two tokens of the same application share one budget, whichever routes and outcomes.
      const second = await f.tokenWith(['oauth-user-show']);
      const requests = [
        () => f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth() }),
        () => f.t.app.inject({ url: '/api/v1/alerts/donations?page=x', headers: f.auth() }), // 400
        () => f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth(second) }), // 403
        () => f.t.app.inject({ url: '/api/v1/nowhere', headers: f.auth() }), // 404
        () => f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth(second) }),
      ];
      const statuses = [];
      for (const [i, send] of requests.entries()) {
        const res = await send();
        statuses.push(res.statusCode);
        assert.equal(res.headers['x-ratelimit-limit'], String(LIMIT));
        assert.equal(res.headers['x-ratelimit-remaining'], String(LIMIT - i - 1));
        assert.equal(res.headers['retry-after'], undefined);
      }
      assert.deepEqual(statuses, [200, 400, 403, 404, 200]);

      const before = Math.floor(Date.now() / 1000);
      const limited = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth() });
      assert.equal(limited.statusCode, 429);
      assert.deepEqual(json(limited), { message: 'Too Many Attempts.' });
      assert.equal(limited.headers['x-ratelimit-limit'], String(LIMIT));
      assert.equal(limited.headers['x-ratelimit-remaining'], '0');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      const reset = Number(limited.headers['x-ratelimit-reset']);
      assert.ok(reset >= before + retryAfter - 1 && reset <= before + 61, `X-RateLimit-Reset ${reset} is a unix time ~${retryAfter}s ahead`);

      // A write over the limit is refused before anything is stored.
      const write = await f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: f.auth(), payload: { header: 'x' } });
      assert.equal(write.statusCode, 429);
      const stored = await f.t.database.db.selectFrom('custom_alerts').select('id').execute();
      assert.equal(stored.length, 0);
    });

    test('another application has its own budget', { skip }, async () => {
      const { app: other } = await makeApp(f.t, f.userId);
      const token = await f.tokenWith(['oauth-user-show'], { clientId: other.client_id });
      const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth(token) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-ratelimit-remaining'], String(LIMIT - 1));
    });

    test('requests without a valid token count per IP, apart from any application', { skip }, async () => {
      const fromA = { remoteAddress: '203.0.113.7' };
      for (let i = 0; i < LIMIT; i++) {
        const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: { authorization: 'Bearer guess' }, ...fromA });
        assert.equal(res.statusCode, 401);
        assert.equal(res.headers['x-ratelimit-remaining'], String(LIMIT - i - 1));
      }
      const blocked = await f.t.app.inject({ url: '/api/v1/user/oauth', ...fromA });
      assert.equal(blocked.statusCode, 429);
      assert.ok(Number(blocked.headers['retry-after']) >= 1);
      const otherIp = await f.t.app.inject({ url: '/api/v1/user/oauth', remoteAddress: '203.0.113.8' });
      assert.equal(otherIp.statusCode, 401);
      assert.equal(otherIp.headers['x-ratelimit-remaining'], String(LIMIT - 1));
    });

    test('CORS preflights are not counted', { skip }, async () => {
      const ip = { remoteAddress: '203.0.113.9' };
      for (let i = 0; i < LIMIT + 2; i++) {
        const res = await f.t.app.inject({
          method: 'OPTIONS',
          url: '/api/v1/user/oauth',
          headers: { origin: 'https://app.example.test', 'access-control-request-method': 'GET' },
          ...ip,
        });
        assert.equal(res.statusCode, 204);
      }
      const res = await f.t.app.inject({ url: '/api/v1/user/oauth', ...ip });
      assert.equal(res.headers['x-ratelimit-remaining'], String(LIMIT - 1));
    });
  });
}

describe('rate limit store failure', () => {
  test('with the Redis store unreachable, requests go through unthrottled instead of failing', async () => {
    // The limiter alone (the rest of the app has its own Redis clients and their own failure modes).
    const app = Fastify({ logger: false });
    const config = testConfig({ REDIS_URL: 'redis://127.0.0.1:1' });
    app.decorate('ctx', { config, secrets: loadSecrets(config) } as unknown as AppContext);
    await registerRateLimit(app);
    app.addHook('onRequest', apiRateLimit(app));
    app.get('/probe', async () => ({ ok: true }));
    try {
      const res = await app.inject({ url: '/probe' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { ok: true });
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    } finally {
      await app.close();
    }
  });

  test('with a Redis that accepts connections and never answers, requests wait at most its command timeout and get their answer', { timeout: 30_000 }, async () => {
    // A stalled Redis (issue 16 "a slow … Redis"): the TCP connection is made, no reply ever comes.
    const sockets = new Set<import('node:net').Socket>();
    const stalled = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const app = Fastify({ logger: false });
    const config = testConfig({ REDIS_URL: `redis://127.0.0.1:${(stalled.address() as AddressInfo).port}` });
    app.decorate('ctx', { config, secrets: loadSecrets(config) } as unknown as AppContext);
    await registerRateLimit(app);
    app.addHook('onRequest', apiRateLimit(app));
    app.get('/probe', async () => ({ ok: true }));
    try {
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ url: '/probe' });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { ok: true });
      }
    } finally {
      await app.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => stalled.close(() => resolve()));
    }
  });
});
