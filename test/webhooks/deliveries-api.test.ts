import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertValidationError, json } from '../api/helpers.js';
import { makeApp, makeUser } from '../helper.js';
import { until } from '../wait.js';
import { receivers } from './receiver.js';
import { useWebhookFixture } from './fixture.js';

/**
 * The delivery log through the API (an OpenAlerts extension): GET /webhooks/{id}/deliveries, paged
 * and filtered by status, and POST …/deliveries/{delivery_id}/redeliver, under the subscription's
 * own rules (another streamer's or application's ids are 404s).
 */
describe('webhook delivery log API (/api/v1/webhooks/{id}/deliveries)', () => {
  const f = useWebhookFixture();
  const receiver = receivers();
  const get = (url: string, token?: string) => f.t.app.inject({ method: 'GET', url, headers: f.auth(token) });
  const delivered = async (subId: number, count: number) =>
    until(async () => {
      const page = json(await get(`/api/v1/webhooks/${subId}/deliveries?status=delivered`));
      // The page's rows and its total are one read: they agree whenever the dispatcher commits.
      assert.equal(page.data.length, Math.min(page.meta.total, 30), 'rows and total from the same read');
      return page.meta.total >= count ? page : null;
    }, 60_000, `${count} delivered`);

  test('lists deliveries newest first with their attempts; 30 a page; status filter kept in the links', async () => {
    const r = await receiver();
    // The first attempt of the first message fails: two attempts in its log.
    r.behave = (_req, n) => (n === 1 ? { status: 500, body: 'not now' } : { status: 200, body: 'thanks' });
    const sub = await f.subscribe(r.url, ['donation.created']);
    const donations = [];
    for (let i = 0; i < 32; i++) donations.push(await f.donate(i + 1));
    await delivered(sub.id, 32);

    const first = await get(`/api/v1/webhooks/${sub.id}/deliveries`);
    assert.equal(first.statusCode, 200, first.body);
    const page1 = json(first);
    assert.equal(page1.data.length, 30);
    assert.equal(page1.meta.total, 32);
    assert.equal(page1.meta.per_page, 30);
    assert.equal(page1.meta.last_page, 2);
    assert.equal(page1.meta.path, `https://alerts.example.test/api/v1/webhooks/${sub.id}/deliveries`);
    assert.equal(page1.links.next, `https://alerts.example.test/api/v1/webhooks/${sub.id}/deliveries?page=2`);
    assert.equal(page1.data[0].message_id, `msg_${donations.at(-1)!.id}`, 'newest first');
    const page2 = json(await get(`/api/v1/webhooks/${sub.id}/deliveries?page=2`));
    assert.equal(page2.data.length, 2);
    const oldest = page2.data.at(-1);
    assert.equal(oldest.message_id, `msg_${donations[0]!.id}`);
    assert.equal(oldest.event_type, 'donation.created');
    assert.equal(oldest.status, 'delivered');
    assert.equal(oldest.next_attempt_at, null);
    assert.match(oldest.finished_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.deepEqual(oldest.attempts.map((a: { status_code: number }) => a.status_code), [500, 200]);
    assert.deepEqual(oldest.attempts.map((a: { response_excerpt: string }) => a.response_excerpt), ['not now', 'thanks']);
    assert.ok(oldest.attempts.every((a: { latency_ms: number; error: null }) => Number.isInteger(a.latency_ms) && a.error === null));
    // A page past the end is empty, not an error, and still tells the total.
    const past = json(await get(`/api/v1/webhooks/${sub.id}/deliveries?page=9`));
    assert.deepEqual(past.data, []);
    assert.equal(past.meta.total, 32);

    // Filtered: the links keep the filter.
    const filtered = json(await get(`/api/v1/webhooks/${sub.id}/deliveries?status=delivered`));
    assert.equal(filtered.meta.total, 32);
    assert.equal(filtered.links.next, `https://alerts.example.test/api/v1/webhooks/${sub.id}/deliveries?status=delivered&page=2`);
    for (const status of ['pending', 'failed', 'cancelled']) {
      const none = json(await get(`/api/v1/webhooks/${sub.id}/deliveries?status=${status}`));
      assert.equal(none.meta.total, 0, status);
      assert.deepEqual(none.data, []);
    }
  });

  test('a pending delivery shows when it is tried next', async () => {
    const r = await receiver();
    r.behave = () => ({ status: 503 });
    const sub = await f.subscribe(r.url, ['donation.created']);
    await f.donate();
    const page = await until(async () => {
      const p = json(await get(`/api/v1/webhooks/${sub.id}/deliveries?status=pending`));
      return p.data[0]?.attempts.length >= 1 ? p : null;
    }, 60_000, 'a failed attempt');
    assert.equal(page.data[0].status, 'pending');
    assert.match(page.data[0].next_attempt_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.equal(page.data[0].attempts[0].status_code, 503);
    await f.t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${sub.id}`, headers: f.auth() });
  });

  test('a bad page or status is a 400 naming it', async () => {
    const r = await receiver();
    const sub = await f.subscribe(r.url, ['donation.created']);
    for (const query of ['?page=0', '?page=two', '?page=1.5', '?page=99999999999', '?page=1&page=2']) assertValidationError(await get(`/api/v1/webhooks/${sub.id}/deliveries${query}`), ['page']);
    for (const query of ['?status=done', '?status=', '?status=pending&status=failed']) assertValidationError(await get(`/api/v1/webhooks/${sub.id}/deliveries${query}`), ['status']);
    assertValidationError(await get(`/api/v1/webhooks/${sub.id}/deliveries?page=-1&status=x`), ['page', 'status']);
  });

  test('redeliver queues the message again with the same webhook-id and body; 202 with the new delivery', async () => {
    const r = await receiver();
    const sub = await f.subscribe(r.url, ['donation.created']);
    await f.donate(9);
    const log = await delivered(sub.id, 1);
    const original = log.data[0];
    await until(() => r.received.length === 1, 60_000, 'first delivery');
    const response = await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${sub.id}/deliveries/${original.id}/redeliver`, headers: f.auth() });
    assert.equal(response.statusCode, 202, response.body);
    const queued = json(response).data;
    assert.notEqual(queued.id, original.id);
    assert.equal(queued.message_id, original.message_id);
    assert.equal(queued.event_type, 'donation.created');
    assert.equal(queued.status, 'pending');
    assert.deepEqual(queued.attempts, []);
    await until(() => r.received.length === 2, 60_000, 'the redelivery');
    assert.equal(r.received[1]!.headers['webhook-id'], r.received[0]!.headers['webhook-id']);
    assert.equal(r.received[1]!.body, r.received[0]!.body);
    const after = await delivered(sub.id, 2);
    assert.equal(after.data[0].id, queued.id);
  });

  test('another streamer’s or application’s subscription or delivery is a 404', async () => {
    const r = await receiver();
    const mine = await f.subscribe(r.url, ['donation.created']);
    const other = await f.subscribe(r.url, ['donation.created']);
    await f.donate();
    const [mineLog, otherLog] = [await delivered(mine.id, 1), await delivered(other.id, 1)];
    const delivery = mineLog.data[0].id;

    const otherUser = await makeUser(f.t.database.db);
    const otherStreamer = await f.tokenWith(['oauth-donation-subscribe'], { userId: otherUser.id });
    const { app: otherApp } = await makeApp(f.t, f.userId);
    const otherClient = await f.tokenWith(['oauth-donation-subscribe'], { clientId: otherApp.client_id });
    for (const token of [otherStreamer, otherClient]) {
      for (const [method, url] of [
        ['GET', `/api/v1/webhooks/${mine.id}/deliveries`],
        ['GET', `/api/v1/webhooks/${mine.id}/deliveries?status=bogus`],
        ['POST', `/api/v1/webhooks/${mine.id}/deliveries/${delivery}/redeliver`],
      ] as const) {
        const response = await f.t.app.inject({ method, url, headers: f.auth(token) });
        assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
        assert.equal(typeof json(response).message, 'string');
      }
    }
    // A delivery of the caller's other subscription, and ids that are no ids.
    const wrongPair = await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${mine.id}/deliveries/${otherLog.data[0].id}/redeliver`, headers: f.auth() });
    assert.equal(wrongPair.statusCode, 404, wrongPair.body);
    for (const id of ['abc', '0', '99999999', '1e3']) {
      assert.equal((await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${mine.id}/deliveries/${id}/redeliver`, headers: f.auth() })).statusCode, 404, id);
      assert.equal((await get(`/api/v1/webhooks/${id}/deliveries`)).statusCode, 404, id);
    }
    // A removed subscription's log is gone from the API too.
    await f.t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${mine.id}`, headers: f.auth() });
    assert.equal((await get(`/api/v1/webhooks/${mine.id}/deliveries`)).statusCode, 404);
    assert.equal((await f.t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${mine.id}/deliveries/${delivery}/redeliver`, headers: f.auth() })).statusCode, 404);
    assert.equal((await get(`/api/v1/webhooks/${mine.id}/deliveries`, 'not-a-token')).statusCode, 401);
  });
});
