import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertValidationError, json } from '../api/helpers.js';
import { makeApp, makeUser } from '../helper.js';
import { until } from '../wait.js';
import { Receiver } from './receiver.js';
import { webhookFixture, type WebhookFixture } from './fixture.js';

describe('webhooks API (/api/v1/webhooks)', () => {
  let f: WebhookFixture;
  let receiver: Receiver;
  before(async () => {
    f = await webhookFixture();
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await f.close();
  });

  test('POST verifies the endpoint with a signed challenge, answers 201 with the secret once; GET lists it without', async () => {
    const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events: ['donation.created', 'goal.updated'] } });
    assert.equal(response.statusCode, 201, response.body);
    const { data } = json(response);
    assert.match(data.secret, /^whsec_[A-Za-z0-9+/=]{32}$/);
    assert.deepEqual(data.events, ['donation.created', 'goal.updated']);
    assert.equal(data.status, 'active');
    // The challenge reached the endpoint signed with the new secret (an independent verifier).
    const challenge = receiver.challenges.at(-1)!;
    assert.doesNotThrow(() => new Webhook(data.secret).verify(challenge.body, challenge.headers as Record<string, string>));
    const list = json(await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: f.auth() })).data;
    assert.equal(list.length, 1);
    assert.equal(list[0].id, data.id);
    assert.equal(list[0].secret, undefined);
    const one = json(await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${data.id}`, headers: f.auth() })).data;
    assert.equal(one.url, receiver.url);
    const deleted = await f.t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${data.id}`, headers: f.auth() });
    assert.equal(deleted.statusCode, 200);
    assert.equal(json(deleted).data.status, 'removed');
    assert.equal((await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${data.id}`, headers: f.auth() })).statusCode, 404);
    assert.deepEqual(json(await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: f.auth() })).data, []);
  });

  test('form bodies with events[] work too', async () => {
    const response = await f.t.app.inject({
      method: 'POST', url: '/api/v1/webhooks', headers: { ...f.auth(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `url=${encodeURIComponent(receiver.url)}&events[]=poll.created&events[]=poll.finished`,
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.deepEqual(json(response).data.events, ['poll.created', 'poll.finished']);
  });

  test('bad URLs are 400 on url: not https, private, link-local, metadata, credentials, garbage', async () => {
    for (const url of ['ftp://example.com/x', 'http://example.com/hook', 'https://10.0.0.5/hook', 'https://169.254.169.254/latest', 'https://[fd00::1]/x', 'https://[::ffff:a9fe:a9fe]/x', 'https://100.64.0.1/', 'https://u:p@example.com/', 'not a url', '', 42]) {
      const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url, events: ['donation.created'] } });
      assertValidationError(response, ['url']);
    }
  });

  test('unknown or missing events are 400 on events', async () => {
    for (const events of [['donation.deleted'], [], 'nope', undefined, [{}]]) {
      const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events } });
      assertValidationError(response, ['events']);
    }
  });

  test('an endpoint that does not echo the challenge is refused (400 on url) and nothing is stored', async () => {
    const before = json(await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: f.auth() })).data.length;
    receiver.answerChallenge = () => ({ status: 200, body: 'ok' });
    try {
      const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events: ['donation.created'] } });
      const errors = assertValidationError(response, ['url']);
      assert.match(errors.url![0]!, /challenge/);
      receiver.answerChallenge = () => ({ status: 500, body: 'boom' });
      assertValidationError(await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events: ['donation.created'] } }), ['url']);
    } finally {
      receiver.answerChallenge = (c) => ({ status: 200, body: c });
    }
    // JSON {"challenge": …} is accepted as well.
    receiver.answerChallenge = (c) => ({ status: 200, body: JSON.stringify({ challenge: c }) });
    try {
      assert.equal((await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events: ['donation.created'] } })).statusCode, 201);
    } finally {
      receiver.answerChallenge = (c) => ({ status: 200, body: c });
    }
    assert.equal(json(await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: f.auth() })).data.length, before + 1);
  });

  test('scopes: oauth-donation-subscribe covers donations, goals and polls; the channel scopes cover theirs; 403 names the scope', async () => {
    const subscribe = (token: string, events: string[]) => f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(token), payload: { url: receiver.url, events } });
    const donationScope = await f.tokenWith(['oauth-donation-subscribe']);
    const all = ['donation.created', 'alert.shown', 'goal.created', 'goal.updated', 'goal.finished', 'poll.created', 'poll.updated', 'poll.finished'];
    const created = await subscribe(donationScope, all);
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(json(created).data.events, all);
    // The real-time channel's own scope still works for its events, and only for them.
    const goalScope = await f.tokenWith(['oauth-goal-subscribe']);
    const pollScope = await f.tokenWith(['oauth-poll-subscribe']);
    assert.equal((await subscribe(goalScope, ['goal.created', 'goal.finished'])).statusCode, 201);
    assert.equal((await subscribe(pollScope, ['poll.updated'])).statusCode, 201);
    for (const [token, event, scope] of [
      [goalScope, 'poll.created', 'oauth-donation-subscribe'],
      [pollScope, 'goal.updated', 'oauth-donation-subscribe'],
      [goalScope, 'donation.created', 'oauth-donation-subscribe'],
      [donationScope, 'custom_alert.created', 'oauth-custom_alert-store'],
    ] as const) {
      const response = await subscribe(token, [event]);
      assert.equal(response.statusCode, 403, `${event}: ${response.body}`);
      assert.match(String(response.headers['www-authenticate']), new RegExp(`insufficient_scope.*${scope}`));
      assert.equal(typeof json(response).message, 'string');
    }
    const sale = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(), payload: { url: receiver.url, events: ['merchandise_sale.created'] } });
    assert.equal(sale.statusCode, 403);
    assert.match(json(sale).message, /Merchandise API access/);
    const noUser = await f.tokenWith(['oauth-donation-subscribe'], { userId: null });
    assert.equal((await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(noUser), payload: { url: receiver.url, events: ['donation.created'] } })).statusCode, 403);
    assert.equal((await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks' })).statusCode, 401);
  });

  test('another streamer’s or another application’s subscription is a 404', async () => {
    const mine = await f.subscribe(receiver.url, ['donation.created']);
    const other = await makeUser(f.t.database.db);
    const otherStreamer = await f.tokenWith(['oauth-donation-subscribe'], { userId: other.id });
    const { app: otherApp } = await makeApp(f.t, f.userId);
    const otherClient = await f.tokenWith(['oauth-donation-subscribe'], { clientId: otherApp.client_id });
    for (const token of [otherStreamer, otherClient]) {
      for (const [method, url] of [['GET', `/api/v1/webhooks/${mine.id}`], ['DELETE', `/api/v1/webhooks/${mine.id}`], ['POST', `/api/v1/webhooks/${mine.id}/secret`]] as const) {
        const response = await f.t.app.inject({ method, url, headers: f.auth(token) });
        assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
        assert.equal(typeof json(response).message, 'string');
      }
      assert.deepEqual(json(await f.t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: f.auth(token) })).data, []);
    }
    for (const id of ['abc', '0', '99999999', '1e3']) assert.equal((await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}`, headers: f.auth() })).statusCode, 404);
  });

  test('the OpenAPI document lists the operations as an OpenAlerts extension', async () => {
    const doc = json(await f.t.app.inject({ method: 'GET', url: '/openapi.json' }));
    for (const [path, method] of [['/api/v1/webhooks', 'post'], ['/api/v1/webhooks', 'get'], ['/api/v1/webhooks/{id}', 'delete'], ['/api/v1/webhooks/{id}/secret', 'post'], ['/api/v1/webhooks/{id}/deliveries', 'get'], ['/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', 'post']] as const) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} documented`);
      assert.equal(op['x-openalerts-extension'], true);
      assert.deepEqual(op.tags, ['Webhooks']);
    }
    assert.match(doc.tags.find((t: { name: string }) => t.name === 'Webhooks').description, /OpenAlerts extension/);
  });

  test('a donation reaches the endpoint signed (standardwebhooks verifies), data equal to the REST resource', async () => {
    // Its own receiver: earlier tests left other subscriptions of this streamer on the shared one.
    const own = await Receiver.start();
    after(() => own.close());
    const sub = await f.subscribe(own.url, ['donation.created']);
    const donation = await f.donate(7, 'webhook donor');
    const got = await until(() => own.received.find((r) => r.json?.data?.id === donation.id), 60_000, 'the donation webhook');
    assert.equal(own.received.length, 1);
    const verified = new Webhook(sub.secret).verify(got.body, got.headers as Record<string, string>) as any;
    assert.equal(verified.type, 'donation.created');
    assert.match(String(got.headers['webhook-id']), /^msg_\d+$/);
    assert.match(verified.timestamp, /^\d{4}-\d\d-\d\dT/);
    const rest = json(await f.t.app.inject({ method: 'GET', url: '/api/v1/alerts/donations', headers: f.auth() })).data.find((d: { id: number }) => d.id === donation.id);
    assert.deepEqual(verified.data, rest);
  });
});
