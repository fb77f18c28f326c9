import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createCustomAlert } from '../../src/modules/custom-alerts/custom-alerts.service.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { markShown } from '../../src/modules/widgets/alerts.service.js';
import { allDeliveriesOf, attemptsOf, findSubscription } from '../../src/modules/webhooks/webhooks.repository.js';
import { reenable } from '../../src/modules/webhooks/webhooks.service.js';
import { json } from '../api/helpers.js';
import { makeApp } from '../helper.js';
import { sleep, until } from '../wait.js';
import { receivers } from './receiver.js';
import { useWebhookFixture } from './fixture.js';

/**
 * Deliveries against a real loopback receiver: failures, timeouts, 500 then 200, 410, redirects,
 * huge answers, DNS that changes between attempts, ownership of custom alerts, secret rotation.
 * Retries are fast here (WEBHOOKS_RETRY_BASE_MS=20); the retry window is 5 s, the timeout 1 s.
 */
describe('webhook delivery', () => {
  const f = useWebhookFixture({ env: { WEBHOOKS_TIMEOUT_MS: '1000', WEBHOOKS_RETRY_WINDOW: '5' } });
  const receiver = receivers();
  const db = () => f.t.database.db;

  test('500 then 200: retried with the same webhook-id and body, delivered; both attempts in the log', async () => {
    const r = await receiver();
    r.behave = (_req, n) => (n === 1 ? { status: 500, body: 'try later' } : { status: 200, body: 'thanks' });
    const sub = await f.subscribe(r.url, ['donation.created']);
    await f.donate();
    await until(() => r.received.length >= 2, 60_000, 'the retry');
    assert.equal(r.received[0]!.headers['webhook-id'], r.received[1]!.headers['webhook-id']);
    assert.equal(r.received[0]!.body, r.received[1]!.body);
    const [delivery] = await until(async () => {
      const rows = await allDeliveriesOf(db(), sub.id);
      return rows[0]?.status === 'delivered' ? rows : null;
    }, 60_000, 'delivered');
    const attempts = await attemptsOf(db(), [delivery!.id]);
    assert.deepEqual(attempts.map((a) => a.status_code), [500, 200]);
    assert.deepEqual(attempts.map((a) => a.response_excerpt), ['try later', 'thanks']);
    assert.ok(attempts.every((a) => a.latency_ms >= 0));
  });

  test('a receiver that hangs times out and is retried; later events wait behind it (order per subscription)', async () => {
    const r = await receiver();
    r.behave = (_req, n) => (n === 1 ? 'hang' : { status: 200 });
    const sub = await f.subscribe(r.url, ['donation.created']);
    const first = await f.donate(1, 'first');
    const second = await f.donate(2, 'second');
    await until(() => r.received.filter((x) => x.json.data.id === second.id).length >= 1, 60_000, 'both delivered');
    const order = r.received.map((x) => x.json.data.id);
    assert.deepEqual(order, [first.id, first.id, second.id], 'the hung one is retried before the next goes out');
    const rows = await allDeliveriesOf(db(), sub.id);
    const attempts = await attemptsOf(db(), [rows[0]!.id]);
    assert.equal(attempts[0]!.status_code, null);
    assert.match(attempts[0]!.error!, /timed out/);
  });

  test('410 Gone removes the subscription and cancels what was queued', async () => {
    const r = await receiver();
    r.behave = () => ({ status: 410 });
    const sub = await f.subscribe(r.url, ['donation.created']);
    await f.donate();
    await f.donate();
    await until(async () => (await findSubscription(db(), sub.id))?.status === 'removed', 60_000, 'removed');
    const row = await findSubscription(db(), sub.id);
    assert.equal(row!.status_reason, 'gone');
    await until(async () => (await allDeliveriesOf(db(), sub.id)).every((d) => d.status === 'cancelled'), 60_000, 'cancelled');
    assert.equal(r.received.length, 1);
    assert.equal((await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${sub.id}`, headers: f.auth() })).statusCode, 404);
  });

  test('an endpoint failing for the whole retry window is disabled; re-enabling delivers the queue in order', async () => {
    const r = await receiver();
    let healthy = false;
    r.behave = () => (healthy ? { status: 204 } : { status: 503 });
    const sub = await f.subscribe(r.url, ['donation.created']);
    const a = await f.donate(1);
    await until(async () => (await findSubscription(db(), sub.id))?.status === 'disabled', 15000, 'disabled');
    const row = (await findSubscription(db(), sub.id))!;
    assert.equal(row.status_reason, 'retries_exhausted');
    const api = json(await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${sub.id}`, headers: f.auth() })).data;
    assert.equal(api.status, 'disabled');
    assert.ok(r.received.length > 2, 'retried several times');
    // Nothing new is queued while disabled; the head that gave up is marked failed.
    await f.donate(2);
    await sleep(200);
    const rows = await allDeliveriesOf(db(), sub.id);
    assert.deepEqual(rows.map((d) => d.status), ['failed']);
    healthy = true;
    const seen = r.received.length;
    // A manual redelivery of the failed message, then re-enable: it goes out.
    const { redeliver } = await import('../../src/modules/webhooks/webhooks.service.js');
    await redeliver(db(), sub.id, rows[0]!.id);
    await reenable(db(), sub.id);
    await until(() => r.received.length > seen, 60_000, 'redelivered after re-enable');
    assert.equal(r.received.at(-1)!.json.data.id, a.id);
    assert.equal(r.received.at(-1)!.headers['webhook-id'], r.received[0]!.headers['webhook-id']);
  });

  test('redirects are not followed (a 302 to 169.254.169.254 is a failed attempt); a 10 MB answer is cut at 64 KB', async () => {
    const r = await receiver();
    r.behave = (_req, n) =>
      n === 1 ? { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } } : { status: 200, body: 'x'.repeat(10 * 1024 * 1024) };
    const sub = await f.subscribe(r.url, ['donation.created']);
    await f.donate();
    const [delivery] = await until(async () => {
      const rows = await allDeliveriesOf(db(), sub.id);
      return rows[0]?.status === 'delivered' ? rows : null;
    }, 60_000, 'delivered');
    const attempts = await attemptsOf(db(), [delivery!.id]);
    assert.deepEqual(attempts.map((a) => a.status_code), [302, 200]);
    assert.ok(attempts[1]!.response_excerpt!.length <= 1024);
    assert.equal(r.received.length, 2);
  });

  test('the address is checked on every attempt: a name that now resolves to the metadata address is refused', async () => {
    const r = await receiver();
    let target = '127.0.0.1';
    f.t.app.ctx.webhooks.resolver = async () => [{ address: target, family: 4 }];
    try {
      const sub = await f.subscribe(`http://localhost:${r.port}/hook`, ['donation.created']);
      await f.donate();
      await until(() => r.received.length === 1, 60_000, 'first delivery');
      target = '169.254.169.254';
      await f.donate();
      const refused = await until(async () => {
        const rows = await allDeliveriesOf(db(), sub.id);
        const attempts = await attemptsOf(db(), rows.map((d) => d.id));
        return attempts.find((a) => a.error?.includes('169.254.169.254'));
      }, 60_000, 'a refused attempt');
      assert.equal(refused.status_code, null);
      assert.equal(r.received.length, 1, 'nothing reached any server');
      target = '127.0.0.1';
      await until(() => r.received.length === 2, 60_000, 'delivered once DNS is sane again');
    } finally {
      f.t.app.ctx.webhooks.resolver = (await import('../../src/modules/webhooks/endpoint.js')).systemResolver;
    }
  });

  test('connections are kept alive, and a kept socket is reused only for the address this attempt checked', async () => {
    const r = await receiver();
    let target = '127.0.0.1';
    f.t.app.ctx.webhooks.resolver = async () => [{ address: target, family: 4 }];
    try {
      const sub = await f.subscribe(`http://localhost:${r.port}/hook`, ['donation.created']);
      await f.donate(1);
      await f.donate(2);
      await until(() => r.received.length === 2, 60_000, 'two deliveries');
      assert.equal(r.received[0]!.remotePort, r.received[1]!.remotePort, 'one connection for both');
      // The name moves to another loopback address where nothing listens: the open connection to
      // 127.0.0.1 must not carry the attempt (it would reach the receiver); it fails to connect.
      target = '127.0.0.2';
      await f.donate(3);
      const refused = await until(async () => {
        const attempts = await attemptsOf(db(), (await allDeliveriesOf(db(), sub.id)).map((d) => d.id));
        return attempts.find((a) => a.error !== null);
      }, 60_000, 'a failed attempt');
      assert.match(refused.error!, /ECONNREFUSED/);
      assert.equal(r.received.length, 2, 'nothing went over the kept connection');
      target = '127.0.0.1';
      await until(() => r.received.length === 3, 60_000, 'delivered once the name points back');
      assert.equal(r.received[2]!.json.data.amount, 3);
    } finally {
      f.t.app.ctx.webhooks.resolver = (await import('../../src/modules/webhooks/endpoint.js')).systemResolver;
    }
  });

  test('custom alerts go only to the application that sent them; data is the REST resource', async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['custom_alert.created']);
    const { app: other } = await makeApp(f.t, f.userId);
    await createCustomAlert(db(), { userId: f.userId, clientId: other.client_id, header: 'not yours' });
    const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: f.auth(), payload: { header: 'mine', message: 'hello' } });
    assert.equal(response.statusCode, 201);
    const resource = json(response).data;
    await until(() => r.received.length >= 1, 60_000, 'the custom alert');
    await sleep(200);
    assert.equal(r.received.length, 1);
    assert.deepEqual(r.received[0]!.json.data, resource);
    assert.equal(r.received[0]!.json.type, 'custom_alert.created');
  });

  test('alert.shown and goal events carry the widget’s answer and the goal resource', async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['alert.shown', 'goal.created']);
    const donation = await f.donate(3);
    const shown = await markShown(db(), f.userId, 'donation', donation.id);
    await markShown(db(), f.userId, 'donation', donation.id); // a repeat records nothing
    const goal = await createGoal(db(), f.userId, { title: 'Camera', goalAmount: '100', startAmount: '0' });
    await until(() => r.received.length >= 2, 60_000, 'two events');
    await sleep(200);
    assert.deepEqual(r.received.map((x) => x.json.type), ['alert.shown', 'goal.created']);
    assert.deepEqual(r.received[0]!.json.data, shown);
    assert.equal(r.received[1]!.json.data.id, goal.id);
    assert.equal(r.received[1]!.json.data.reason, undefined);
  });

  test('secret rotation: both signatures during the overlap, either secret verifies', async () => {
    const r = await receiver();
    const sub = await f.subscribe(r.url, ['donation.created']);
    const rotated = await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${sub.id}/secret`, headers: f.auth() });
    assert.equal(rotated.statusCode, 200);
    const secret = json(rotated).data.secret as string;
    assert.notEqual(secret, sub.secret);
    await f.donate();
    await until(() => r.received.length === 1, 60_000, 'delivery');
    const got = r.received[0]!;
    assert.equal(String(got.headers['webhook-signature']).split(' ').length, 2);
    for (const s of [secret, sub.secret]) assert.doesNotThrow(() => new Webhook(s).verify(got.body, got.headers as Record<string, string>));
  });
});

describe('webhook secret rotation after the overlap', () => {
  // WEBHOOKS_SECRET_OVERLAP=0: the overlap is over as soon as the secret is rotated.
  const f = useWebhookFixture({ env: { WEBHOOKS_SECRET_OVERLAP: '0' } });
  const receiver = receivers();

  test('once the overlap is over only the new secret signs; the old one no longer verifies', async () => {
    const r = await receiver();
    const sub = await f.subscribe(r.url, ['donation.created']);
    const rotated = await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${sub.id}/secret`, headers: f.auth() });
    assert.equal(rotated.statusCode, 200);
    const secret = json(rotated).data.secret as string;
    await f.donate();
    await until(() => r.received.length === 1, 60_000, 'delivery');
    const got = r.received[0]!;
    assert.equal(String(got.headers['webhook-signature']).split(' ').length, 1);
    assert.doesNotThrow(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>));
    assert.throws(() => new Webhook(sub.secret).verify(got.body, got.headers as Record<string, string>));
  });
});
