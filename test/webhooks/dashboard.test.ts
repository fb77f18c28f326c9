import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
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
  assert.match(page.body, /Подписать приложение/);
  assert.match(page.body, /Приложение и стример/);
  assert.match(page.body, /Сменить секрет/);
  assert.doesNotMatch(page.body, /Redeliver|Re-enable|are stopped|Delivery log|Subscribe/, 'no English left');
});

test('the notice names the retry window in its largest whole unit (24 hours by default)', () => {
  assert.deepEqual(retryWindowText(24 * 3600_000), { unit: 'hour', n: 24 });
  assert.deepEqual(retryWindowText(90 * 60_000), { unit: 'minute', n: 90 });
  assert.deepEqual(retryWindowText(1000), { unit: 'second', n: 1 });
});

test('dashboard: an application owner subscribes for a streamer who authorized it, sees the secret once, rotates it; nobody else can', async () => {
  const hook = await Receiver.start();
  after(() => hook.close());
  const owner = await streamer(t);
  const { app: client } = await makeApp(t, owner.user.id);
  const viewer = await streamer(t);
  // The viewer authorized the application (a live grant) for donations only.
  await issueToken(t, { userId: viewer.user.id, clientId: client.client_id, scopes: ['oauth-donation-subscribe'] });
  const grant = `${client.client_id}:${viewer.user.id}`;

  const page = await owner.browser.get('/dashboard/webhooks');
  assert.match(page.body, new RegExp(`<option value="${grant}">Test client → ${viewer.user.name}</option>`));
  // Refused forms change nothing and are shown again as typed: a bad URL, an event the grant does not cover.
  const badUrl = await owner.browser.postForm('/dashboard/webhooks', { grant, url: 'http://example.com/hook', events: 'donation.created' });
  assert.equal(badUrl.statusCode, 422);
  assert.match(badUrl.body, /must use https/);
  assert.match(badUrl.body, /value="http:\/\/example\.com\/hook"/);
  const badScope = await owner.browser.postForm('/dashboard/webhooks', { grant, url: hook.url, events: 'custom_alert.created' });
  assert.equal(badScope.statusCode, 422);
  assert.match(badScope.body, /oauth-custom_alert-store/);
  assert.equal(hook.challenges.length, 0, 'no challenge sent for a refused form');

  const created = await owner.browser.postForm('/dashboard/webhooks', { grant, url: hook.url, events: 'donation.created' });
  assert.equal(created.statusCode, 303, created.body);
  const id = Number(/#webhook-(\d+)$/.exec(String(created.headers.location))![1]);
  const shown = await owner.browser.get('/dashboard/webhooks');
  const secret = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(shown.body)![1]!;
  assert.doesNotThrow(() => new Webhook(secret).verify(hook.challenges[0]!.body, hook.challenges[0]!.headers as Record<string, string>), 'the challenge was signed with the secret shown');
  assert.doesNotMatch((await owner.browser.get('/dashboard/webhooks')).body, /webhook-secret/, 'shown once');
  const row = (await findSubscription(t.database.db, id))!;
  assert.deepEqual([row.app_id, row.user_id, row.status, JSON.parse(row.events)], [client.client_id, viewer.user.id, 'active', ['donation.created']]);

  // Someone without a grant to their application, or another owner: 404, nothing stored.
  const stranger = await streamer(t);
  await stranger.browser.get('/dashboard/webhooks');
  assert.equal((await stranger.browser.postForm('/dashboard/webhooks', { grant, url: hook.url, events: 'donation.created' })).statusCode, 404);
  assert.equal((await owner.browser.postForm('/dashboard/webhooks', { grant: `${client.client_id}:${stranger.user.id}`, url: hook.url, events: 'donation.created' })).statusCode, 404);
  assert.equal(hook.challenges.length, 1);

  // Rotation: the owner only (the streamer sees no button and gets a 404); the new secret shown once, both sign.
  const viewerPage = await viewer.browser.get('/dashboard/webhooks');
  assert.doesNotMatch(viewerPage.body, new RegExp(`/dashboard/webhooks/${id}/secret`));
  assert.equal((await viewer.browser.postForm(`/dashboard/webhooks/${id}/secret`, {})).statusCode, 404);
  await owner.browser.get('/dashboard/webhooks');
  const rotated = await owner.browser.postForm(`/dashboard/webhooks/${id}/secret`, {});
  assert.equal(rotated.statusCode, 303);
  const next = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec((await owner.browser.get('/dashboard/webhooks')).body)![1]!;
  assert.notEqual(next, secret);
  await createDonation(t.database.db, { userId: viewer.user.id, amount: 2, currency: 'USD', username: 'someone' });
  const got = await until(() => hook.received[0], 60_000, 'the delivery');
  for (const s of [next, secret]) assert.doesNotThrow(() => new Webhook(s).verify(got.body, got.headers as Record<string, string>));
});
