import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, issueToken, listen, makeApp, makeUser, type TestApp } from '../helper.js';
import { until } from '../wait.js';
import { RawClient } from '../ws-client.js';
import { familyOf, parsePrometheusText, sampleSum, type Scrape } from './prometheus-text.js';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('GET /metrics without METRICS_TOKEN', () => {
  test('is not there at all (404), whatever the Authorization header says', async () => {
    const t = await buildTestApp();
    try {
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
        const res = await t.app.inject({ url: '/metrics', headers });
        assert.equal(res.statusCode, 404);
      }
    } finally {
      await t.close();
    }
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '4' } });
  });
  after(() => t.close());

  async function scrape(): Promise<Scrape> {
    const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(res.body);
  }

  test('answers only to the bearer token: none, another token or another scheme is a 401', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, 'Bearer ']) {
      const res = await t.app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      assert.equal(res.statusCode, 401, String(authorization));
      assert.doesNotMatch(res.body, /openalerts_/);
    }
    await scrape();
  });

  test('a donation moves the request, database and publish counters; the outbox drains to 0', async () => {
    const streamer = await makeUser(t.database.db, { currency: 'USD' });
    const before = await scrape();
    const lastOutboxId = (await t.database.db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0;

    const donor = new BrowserSession(t.app);
    assert.equal((await donor.get(`/r/${streamer.code}`)).statusCode, 200);
    const posted = await donor.postForm(`/r/${streamer.code}`, { username: 'Ann', amount: '5', currency: 'USD', message: 'hello' });
    assert.equal(posted.statusCode, 303, posted.body);

    const events = await t.database.db.selectFrom('outbox').select('id').where('id', '>', Number(lastOutboxId)).execute();
    assert.equal(events.length, 1, 'the donation queued one event (for both of its channels)');
    let after = await scrape();
    // The relay publishes, then marks the rows published: wait for both.
    for (let i = 0; i < 100 && (sampleSum(after, 'openalerts_outbox_publish_latency_seconds_count') - sampleSum(before, 'openalerts_outbox_publish_latency_seconds_count') < events.length || sampleSum(after, 'openalerts_outbox_backlog') > 0); i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await scrape();
    }

    const requests = (s: Scrape) => sampleSum(s, 'openalerts_http_request_duration_seconds_count', { method: 'POST', route: '/r/:code', status_code: '303' });
    assert.equal(requests(after) - requests(before), 1, 'one POST /r/:code → 303, by route template');
    assert.equal(
      sampleSum(after, 'openalerts_http_request_duration_seconds_count', { route: `/r/${streamer.code}` }),
      0,
      'never labelled by the raw URL',
    );
    assert.equal(
      sampleSum(after, 'openalerts_outbox_publish_latency_seconds_count') - sampleSum(before, 'openalerts_outbox_publish_latency_seconds_count'),
      events.length,
      'the donation’s event was published once',
    );
    assert.ok(sampleSum(after, 'openalerts_db_query_duration_seconds_count', { outcome: 'ok' }) > sampleSum(before, 'openalerts_db_query_duration_seconds_count', { outcome: 'ok' }));
    assert.equal(sampleSum(after, 'openalerts_outbox_backlog'), 0);
    assert.equal(sampleSum(after, 'openalerts_outbox_oldest_unpublished_age_seconds'), 0);
  });

  test('unpublished rows show as backlog with the age of the oldest', async () => {
    const streamer = await makeUser(t.database.db, { currency: 'USD' });
    await t.app.ctx.relay.stop();
    try {
      await createDonation(t.database.db, { userId: streamer.id, amount: '3', currency: 'USD', username: 'Bo', message: '', payinSystem: 'Sandbox' });
      const pending = await t.database.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute();
      await new Promise((r) => setTimeout(r, 30));
      const s = await scrape();
      assert.equal(sampleSum(s, 'openalerts_outbox_backlog'), pending.length);
      assert.ok(pending.length > 0);
      assert.ok(sampleSum(s, 'openalerts_outbox_oldest_unpublished_age_seconds') >= 0.03);
    } finally {
      t.app.ctx.relay.start();
    }
  });

  test('bearer-token checks: valid ones hit the cache after the first, invalid ones are counted; 429s are counted by route', async () => {
    const streamer = await makeUser(t.database.db);
    const { app: client } = await makeApp(t, streamer.id);
    const token = await issueToken(t, { userId: streamer.id, clientId: client.client_id, scopes: ['oauth-donation-index'] });
    const before = await scrape();
    const list = (bearer: string) => t.app.inject({ url: '/api/v1/alerts/donations', headers: { authorization: `Bearer ${bearer}` } });
    assert.equal((await list(token)).statusCode, 200);
    assert.equal((await list(token)).statusCode, 200);
    assert.equal((await list('not-a-token')).statusCode, 401);
    const mid = await scrape();
    const valid = sampleSum(mid, 'openalerts_oauth_token_checks_total', { result: 'valid' }) - sampleSum(before, 'openalerts_oauth_token_checks_total', { result: 'valid' });
    const hits = sampleSum(mid, 'openalerts_oauth_token_cache_hits_total') - sampleSum(before, 'openalerts_oauth_token_cache_hits_total');
    assert.ok(valid >= 2, `valid checks: ${valid}`);
    assert.equal(hits, valid - 1, 'only the first check of the token read the database');
    assert.ok(sampleSum(mid, 'openalerts_oauth_token_checks_total', { result: 'invalid' }) > sampleSum(before, 'openalerts_oauth_token_checks_total', { result: 'invalid' }));

    // RATE_LIMIT_PER_MINUTE=4: the third and fourth request pass, the fifth is refused.
    assert.equal((await list(token)).statusCode, 200);
    assert.equal((await list(token)).statusCode, 200);
    assert.equal((await list(token)).statusCode, 429);
    const limited = await scrape();
    assert.equal(sampleSum(limited, 'openalerts_rate_limit_rejections_total', { route: '/api/v1/alerts/donations' }), 1);
    assert.equal(sampleSum(limited, 'openalerts_http_request_duration_seconds_count', { route: '/api/v1/alerts/donations', status_code: '429' }), 1);
  });

  test('real-time: open sockets by protocol, subscriptions, recoveries by outcome', async () => {
    const url = await listen(t.app);
    const wsUrl = `${url.replace(/^http/, 'ws')}/connection/websocket`;
    const secret = t.app.ctx.secrets.realtimeTokenSecret;
    // Real-time tokens of a user id are checked against the account: the streamer must exist.
    const userId = String((await makeUser(t.database.db)).id);
    const channel = `$alerts:donation_${userId}`;
    const token = await signChannelToken(secret, { channel, sub: userId });
    await t.app.ctx.realtime.node.publish(channel, { id: 1 });

    const silent = await RawClient.open(wsUrl);
    const modern = await RawClient.open(wsUrl);
    modern.send({ id: 1, connect: { token: await signConnectionToken(secret, userId) } });
    const client = (await modern.next()).connect.client;
    assert.ok(client);
    modern.send({ id: 2, subscribe: { channel, token, recover: true, offset: 0, epoch: '' } });
    assert.equal((await modern.next()).subscribe.recovered, true);
    modern.send({ id: 3, subscribe: { channel: `$goals:goal_${userId}`, token: await signChannelToken(secret, { channel: `$goals:goal_${userId}`, sub: userId }), recover: true, offset: 5, epoch: 'gone' } });
    assert.equal((await modern.next()).subscribe.recovered, undefined);

    const s = await scrape();
    assert.equal(sampleSum(s, 'openalerts_realtime_sockets', { protocol: 'v2' }), 1);
    assert.equal(sampleSum(s, 'openalerts_realtime_sockets', { protocol: 'undetected' }), 1);
    assert.equal(sampleSum(s, 'openalerts_realtime_sockets', { protocol: 'legacy' }), 0);
    assert.equal(sampleSum(s, 'openalerts_realtime_subscriptions'), 2);
    assert.equal(sampleSum(s, 'openalerts_realtime_recoveries_total', { outcome: 'recovered' }), 1);
    assert.equal(sampleSum(s, 'openalerts_realtime_recoveries_total', { outcome: 'not_recovered' }), 1);
    silent.close();
    modern.close();
    await Promise.all([silent.closed, modern.closed]);
    await until(() => t.app.ctx.realtime.node.socketsByProtocol().v2 === 0, 3000, 'sockets closed');
    const closed = await scrape();
    assert.equal(sampleSum(closed, 'openalerts_realtime_sockets'), 0);
    assert.equal(sampleSum(closed, 'openalerts_realtime_subscriptions'), 0);
  });

  test('process metrics, event-loop lag and every family the docs name are in the scrape', async () => {
    const s = await scrape();
    for (const family of [
      'process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes',
      'openalerts_http_request_duration_seconds', 'openalerts_oauth_token_checks_total', 'openalerts_oauth_token_cache_hits_total',
      'openalerts_rate_limit_rejections_total', 'openalerts_outbox_backlog', 'openalerts_outbox_oldest_unpublished_age_seconds',
      'openalerts_outbox_publish_latency_seconds', 'openalerts_realtime_sockets', 'openalerts_realtime_subscriptions',
      'openalerts_realtime_recoveries_total', 'openalerts_broker_errors_total', 'openalerts_db_query_duration_seconds',
    ]) {
      assert.ok(familyOf(s, family), `${family} is exported`);
    }
    assert.equal(s.types.get('openalerts_http_request_duration_seconds'), 'histogram');
    assert.equal(sampleSum(s, 'openalerts_broker_errors_total'), 0);
  });
});
