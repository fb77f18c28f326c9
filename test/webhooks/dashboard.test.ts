import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { findSubscription } from '../../src/modules/webhooks/webhooks.repository.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import { assertHtml, assertNoInlineScript, browserFor, streamer } from '../dashboard/helpers.js';
import { buildTestApp, issueToken, makeApp, type TestApp } from '../helper.js';
import { retryWindowText } from '../../src/web/pages/dashboard/webhooks.pages.js';
import { until } from '../wait.js';
import { Receiver } from './receiver.js';
import { WEBHOOK_TEST_ENV } from './fixture.js';

let t: TestApp;
let receiver: Receiver;
before(async () => {
  t = await buildTestApp({ env: { ...WEBHOOK_TEST_ENV, WEBHOOKS_RETRY_WINDOW: '1' } });
  receiver = await Receiver.start();
});
after(async () => {
  await receiver.close();
  await t.close();
});

test('dashboard: the streamer sees the disabled notice, the log, redelivers and re-enables; the app owner sees it too; others get 404', async () => {
  let healthy = false;
  receiver.behave = () => (healthy ? { status: 200, body: 'ok' } : { status: 503, body: 'down for <maintenance>' });
  const owner = await streamer(t);
  const { app: client } = await makeApp(t, owner.user.id);
  await t.database.db.updateTable('apps').set({ name: 'Discord <bot>' }).where('id', '=', client.client_id).execute();
  const viewer = await streamer(t);
  const token = await issueToken(t, { userId: viewer.user.id, clientId: client.client_id, scopes: [...ALL_SCOPES] });
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${token}` }, payload: { url: receiver.url, events: ['donation.created'] } });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().data.id as number;
  const donation = await createDonation(t.database.db, { userId: viewer.user.id, amount: 5, currency: 'USD', username: 'someone' });
  await until(async () => (await findSubscription(t.database.db, id))?.status === 'disabled', 15000, 'disabled after the window');

  const page = await viewer.browser.get('/dashboard/webhooks');
  assertHtml(page);
  assertNoInlineScript(page.body);
  assert.match(page.body, /Webhooks of Discord &lt;bot&gt; to http:\/\/127\.0\.0\.1:\d+\/hook are stopped/);
  assert.match(page.body, /kept failing for 1 second\./, 'the configured retry window (WEBHOOKS_RETRY_WINDOW=1), not a fixed 24 hours');
  assert.match(page.body, /disabled: the endpoint failed for the whole retry window/);
  assert.match(page.body, /<code>down for &lt;maintenance&gt;<\/code>/, 'the response excerpt, escaped');
  assert.match(page.body, /<strong>503<\/strong>/);
  assert.match(page.body, /gave up/);
  assert.match(page.body, /href="\/dashboard\/webhooks"/, 'in the menu');
  const deliveryId = Number(new RegExp(`/dashboard/webhooks/${id}/deliveries/(\\d+)/redeliver`).exec(page.body)![1]);

  // Someone else: nothing shown, every action a 404.
  const intruder = await streamer(t);
  const theirs = await intruder.browser.get('/dashboard/webhooks');
  assert.doesNotMatch(theirs.body, /Discord/);
  for (const path of [`/dashboard/webhooks/${id}/reenable`, `/dashboard/webhooks/${id}/remove`, `/dashboard/webhooks/${id}/deliveries/${deliveryId}/redeliver`]) {
    assert.equal((await intruder.browser.postForm(path, {})).statusCode, 404, path);
  }

  // The owner of the application sees it under their applications, with the streamer.
  const ownerPage = await owner.browser.get('/dashboard/webhooks');
  assert.match(ownerPage.body, new RegExp(`Discord &lt;bot&gt; → ${viewer.user.name}`));

  healthy = true;
  const seen = receiver.received.length;
  const redeliver = await viewer.browser.postForm(`/dashboard/webhooks/${id}/deliveries/${deliveryId}/redeliver`, {});
  assert.equal(redeliver.statusCode, 303);
  const reenable = await viewer.browser.postForm(`/dashboard/webhooks/${id}/reenable`, {});
  assert.equal(reenable.statusCode, 303);
  assert.equal(reenable.headers.location, `/dashboard/webhooks#webhook-${id}`);
  await until(() => receiver.received.length > seen, 60_000, 'redelivered');
  assert.equal(receiver.received.at(-1)!.json.data.id, donation.id);
  assert.equal((await findSubscription(t.database.db, id))!.status, 'active');

  await viewer.browser.get('/dashboard/webhooks');
  assert.equal((await viewer.browser.postForm(`/dashboard/webhooks/${id}/remove`, {})).statusCode, 303);
  const removed = (await findSubscription(t.database.db, id))!;
  assert.equal(removed.status, 'removed');
  assert.equal(removed.status_reason, 'deleted_by_streamer');
  const after = await viewer.browser.get('/dashboard/webhooks');
  assert.match(after.body, /removed by the streamer/);
});

test('dashboard in Russian: the notice, the status, the log and the actions', async () => {
  const failing = await Receiver.start();
  after(() => failing.close());
  failing.behave = () => ({ status: 503, body: 'нет' });
  const { user } = await streamer(t, { language: 'ru_RU' } as never);
  const { app: client } = await makeApp(t, user.id);
  const token = await issueToken(t, { userId: user.id, clientId: client.client_id, scopes: [...ALL_SCOPES] });
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${token}` }, payload: { url: failing.url, events: ['donation.created'] } });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().data.id as number;
  await createDonation(t.database.db, { userId: user.id, amount: 5, currency: 'USD', username: 'someone' });
  await until(async () => (await findSubscription(t.database.db, id))?.status === 'disabled', 15000, 'disabled after the window');
  const browser = await browserFor(t, user);
  const page = await browser.get('/dashboard/webhooks');
  assertHtml(page);
  assert.match(page.body, /Вебхуки/);
  assert.match(page.body, /остановлены: адрес не отвечал как надо 1 секунду\./);
  assert.match(page.body, /включите подписку снова/);
  assert.match(page.body, /отключена: адрес не отвечал всё время повторных попыток/);
  assert.match(page.body, /Журнал доставки/);
  assert.match(page.body, /не доставлено/);
  assert.match(page.body, /Отправить снова/);
  assert.match(page.body, /Включить снова/);
  assert.doesNotMatch(page.body, /Redeliver|Re-enable|are stopped|Delivery log/, 'no English left');
});

test('the notice names the retry window in its largest whole unit (24 hours by default)', () => {
  assert.deepEqual(retryWindowText(24 * 3600_000), { unit: 'hour', n: 24 });
  assert.deepEqual(retryWindowText(90 * 60_000), { unit: 'minute', n: 90 });
  assert.deepEqual(retryWindowText(1000), { unit: 'second', n: 1 });
});
