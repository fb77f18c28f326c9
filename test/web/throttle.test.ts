import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { LOGIN_MAX_DELAY_MS, loginRetryDelayMs } from '../../src/modules/accounts/accounts.service.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, REDIS_URL, redisAvailable, testConfig, type TestApp } from '../helper.js';

const PASSWORD = 'correct horse battery';

/** One forged client address per request, as an attacker rotating X-Forwarded-For sends. */
const forged = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i % 250}, 203.0.113.${(i * 7) % 250}` });

async function csrfFor(app: FastifyInstance, path: string): Promise<{ cookie: string; token: string }> {
  const browser = new BrowserSession(app);
  await browser.get(path);
  return { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '), token: browser.lastCsrf! };
}

function postForm(app: FastifyInstance, url: string, session: { cookie: string; token: string }, fields: Record<string, string>, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') {
  return app.inject({
    method: 'POST',
    url,
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: session.cookie, ...headers },
    payload: new URLSearchParams({ _csrf: session.token, ...fields }).toString(),
  });
}

/** Statuses of 50 posts, each with its own forged X-Forwarded-For. */
async function fiftyForged(send: (headers: Record<string, string>, i: number) => Promise<{ statusCode: number }>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) statuses.push((await send(forged(i), i)).statusCode);
  return statuses;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('with TRUST_PROXY unset, X-Forwarded-For cannot pick the address that per-IP limits count', () => {
  let t: TestApp;
  let streamerCode: string;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '10' } });
    streamerCode = (await makeUser(t.database.db)).code;
  });
  after(async () => t.close());

  test('50 log-ins with rotating X-Forwarded-For: 10 are checked, 40 are a 429, as from one address', async () => {
    const session = await csrfFor(t.app, '/login');
    // A different unknown account each time, so only the per-IP limit can stop them.
    const statuses = await fiftyForged((headers, i) => postForm(t.app, '/login', session, { email: `nobody${i}@example.test`, password: 'guess' }, headers));
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.deepEqual(statuses.slice(10), Array(40).fill(429));
  });

  test('50 sign-ups with rotating X-Forwarded-For: 10 reach the form, the rest are a 429', async () => {
    const session = await csrfFor(t.app, '/signup');
    const statuses = await fiftyForged((headers, i) =>
      postForm(t.app, '/signup', session, { email: `new${i}@example.test`, name: `New ${i}`, password: 'short' }, headers),
    );
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(422));
    assert.deepEqual(statuses.slice(10), Array(40).fill(429));
  });

  test('50 donor-page posts with rotating X-Forwarded-For: 30 are taken, the rest are a 429', async () => {
    const session = await csrfFor(t.app, `/r/${streamerCode}`);
    const statuses = await fiftyForged((headers, i) =>
      postForm(t.app, `/r/${streamerCode}`, session, { username: `fan${i}`, amount: '', currency: 'USD', message: '' }, headers),
    );
    assert.equal(count(statuses.slice(0, 30), 422), 30, statuses.join(','));
    assert.deepEqual(statuses.slice(30), Array(20).fill(429));
  });

  test('50 API calls without a valid token and with rotating X-Forwarded-For share one budget', async () => {
    const statuses = await fiftyForged((headers) => t.app.inject({ url: '/api/v1/user/oauth', remoteAddress: '192.0.2.44', headers: { ...headers, authorization: 'Bearer guess' } }));
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.deepEqual(statuses.slice(10), Array(40).fill(429));
  });
});

describe('with TRUST_PROXY naming the proxy, its X-Forwarded-For is the client address', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_MINUTE: '10' } });
  });
  after(async () => t.close());

  test('log-ins through the proxy count per forwarded client', async () => {
    const session = await csrfFor(t.app, '/login');
    const statuses = await fiftyForged((headers, i) => postForm(t.app, '/login', session, { email: `nobody${i}@example.test`, password: 'guess' }, headers));
    assert.deepEqual(statuses, Array(50).fill(401));
  });

  test('a peer that is not the proxy cannot forward: its own address counts', async () => {
    const statuses = await fiftyForged((headers) => t.app.inject({ url: '/api/v1/user/oauth', remoteAddress: '192.0.2.45', headers }));
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.equal(count(statuses.slice(10), 429), 40);
  });
});

describe('log-in backoff per account', () => {
  test('the retry delay doubles from 1 s after 5 failures and never passes the cap', () => {
    assert.deepEqual([0, 4].map(loginRetryDelayMs), [0, 0]);
    assert.deepEqual([5, 6, 7, 8].map(loginRetryDelayMs), [1000, 2000, 4000, 8000]);
    for (let failures = 5; failures < 10_000; failures += 7) assert.ok(loginRetryDelayMs(failures) <= LOGIN_MAX_DELAY_MS);
    assert.equal(loginRetryDelayMs(1e9), LOGIN_MAX_DELAY_MS);
  });

  test('failures from many addresses slow that account down, not others; the owner gets in once the delay passes', async () => {
    const t = await buildTestApp();
    try {
      const owner = await makeUser(t.database.db, { password: PASSWORD });
      const bystander = await makeUser(t.database.db, { password: PASSWORD });
      const session = await csrfFor(t.app, '/login');
      for (let i = 0; i < 5; i++) {
        const res = await postForm(t.app, '/login', session, { email: owner.email, password: `guess ${i}` }, {}, `192.0.2.${10 + i}`);
        assert.equal(res.statusCode, 401);
      }
      // A sixth address, even with the right password, waits out the delay: the password is not checked.
      const held = await postForm(t.app, '/login', session, { email: owner.email.toUpperCase(), password: PASSWORD }, {}, '192.0.2.20');
      assert.equal(held.statusCode, 429);
      assert.equal(held.headers['retry-after'], '1');
      assert.match(held.body, /Too many failed log-ins for this account/);

      const other = await postForm(t.app, '/login', session, { email: bystander.email, password: PASSWORD }, {}, '192.0.2.21');
      assert.equal(other.statusCode, 303, 'another account is not slowed down');

      await sleep(1100);
      const owners = await postForm(t.app, '/login', session, { email: owner.email, password: PASSWORD }, {}, '192.0.2.22');
      assert.equal(owners.statusCode, 303);

      // One slot per delay: of parallel guesses, at most one is checked.
      const parallel = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => postForm(t.app, '/login', session, { email: owner.email, password: `parallel ${i}` }, {}, `192.0.2.${30 + i}`)),
      );
      assert.ok(count(parallel.map((r) => r.statusCode), 401) <= 1, parallel.map((r) => r.statusCode).join(','));
      assert.ok(count(parallel.map((r) => r.statusCode), 429) >= 4);
    } finally {
      await t.close();
    }
  });
});

describe('throttles across nodes (Redis counters)', async () => {
  const skip = (await redisAvailable()) ? false : 'Redis not reachable';

  test('two nodes sharing REDIS_URL share the per-IP log-in limit and the per-account backoff', { skip }, async () => {
    const t = await buildTestApp({ env: { REDIS_URL } });
    const second = await buildApp(testConfig({ REDIS_URL }), { logger: false, database: t.database, secrets: t.app.ctx.secrets });
    await second.ready();
    try {
      const owner = await makeUser(t.database.db, { password: PASSWORD });
      const nodes = [t.app, second];
      const sessions = [await csrfFor(t.app, '/login'), await csrfFor(second, '/login')];
      // Five failures for one account, alternating nodes and addresses.
      for (let i = 0; i < 5; i++) {
        const res = await postForm(nodes[i % 2]!, '/login', sessions[i % 2]!, { email: owner.email, password: `guess ${i}` }, {}, `192.0.2.${50 + i}`);
        assert.equal(res.statusCode, 401);
      }
      const held = await postForm(second, '/login', sessions[1]!, { email: owner.email, password: PASSWORD }, {}, '192.0.2.60');
      assert.equal(held.statusCode, 429);

      // Ten attempts from one address, five per node; the eleventh is refused on either node.
      for (let i = 0; i < 10; i++) {
        const res = await postForm(nodes[i % 2]!, '/login', sessions[i % 2]!, { email: `nobody${i}@example.test`, password: 'guess' }, {}, '192.0.2.70');
        assert.equal(res.statusCode, 401);
      }
      for (const [i, node] of nodes.entries()) {
        const res = await postForm(node, '/login', sessions[i]!, { email: 'nobody@example.test', password: 'guess' }, {}, '192.0.2.70');
        assert.equal(res.statusCode, 429);
      }
    } finally {
      await second.close();
      await t.close();
    }
  });
});
