import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { envToConfig, ConfigError } from '../../src/config/config.js';
import { attachCheckout, createPendingDonation } from '../../src/modules/payments/payments.service.js';
import { webhookHeaders } from '../../src/security/standard-webhooks.js';

/** Standard Webhooks headers for a body signed now (or at `at`). */
const signWebhook = (secret: string, id: string, body: string, at = new Date()) => webhookHeaders([secret], id, Math.floor(at.getTime() / 1000), body);
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, dialects, makeUser, type TestApp } from '../helper.js';
import { donationsOf, FORM, kofiBody, paymentsApp, STRIPE_WEBHOOK_SECRET, streamerWith, yoomoneyBody } from './fixture.js';

describe('which providers an instance runs', () => {
  const sandbox = (env: Record<string, string>) => envToConfig({ DATA_DIR: '/tmp/unused', ...env }).payments.sandbox;
  test('the test provider is on by default only while PUBLIC_URL is a loopback address; SANDBOX decides otherwise', () => {
    assert.equal(sandbox({}), true, 'the default PUBLIC_URL is http://localhost:<port>');
    for (const url of ['http://127.0.0.1:3000', 'http://[::1]:3000', 'http://alerts.localhost']) assert.equal(sandbox({ PUBLIC_URL: url }), true, url);
    for (const url of ['https://alerts.example.com', 'http://192.168.1.5:3000', 'http://localhost.example.com']) assert.equal(sandbox({ PUBLIC_URL: url }), false, url);
    assert.equal(sandbox({ PUBLIC_URL: 'https://alerts.example.com', SANDBOX: '1' }), true);
    assert.equal(sandbox({ SANDBOX: '0' }), false);
  });

  test('PAYMENT_PROVIDERS names known providers; Stripe needs both of its keys', () => {
    assert.deepEqual(envToConfig({ DATA_DIR: '/tmp/unused', PAYMENT_PROVIDERS: 'yoomoney, kofi' }).payments.enabled, ['yoomoney', 'kofi']);
    assert.throws(() => envToConfig({ PAYMENT_PROVIDERS: 'paypal' }), (err: Error) => err instanceof ConfigError && /PAYMENT_PROVIDERS.*paypal/.test(err.message));
    assert.throws(() => envToConfig({ PAYMENT_PROVIDERS: 'stripe' }), /STRIPE_SECRET_KEY/);
    assert.throws(() => envToConfig({ PAYMENT_PROVIDERS: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x' }), /STRIPE_WEBHOOK_SECRET/);
    assert.throws(() => envToConfig({ STRIPE_SECRET_KEY: 'sk_test_x' }), /stripe is not in PAYMENT_PROVIDERS/);
  });
});

describe('the donor page on a public instance', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { PUBLIC_URL: 'https://alerts.example.com', PAYMENT_PROVIDERS: 'yoomoney' } });
  });
  after(() => t?.close());

  test('no provider on: the page says donations are not open, in the donor’s language, and a forged post records nothing', async () => {
    const user = await makeUser(t.database.db);
    const donor = new BrowserSession(t.app);
    const page = await donor.get(`/r/${user.code}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /is not taking donations here right now/);
    assert.doesNotMatch(page.body, /class="donor-form"/);
    assert.match((await donor.get(`/r/${user.code}?lang=ru_RU`)).body, /сейчас не принимает донаты/);
    const post = await donor.postForm(`/r/${user.code}`, { amount: '5', currency: 'USD', provider: 'test' });
    assert.equal(post.statusCode, 403);
    assert.equal((await donationsOf(t, user.id)).length, 0);
  });

  test('YooMoney on: roubles only; the page hands the donor to the quickpay form with the pending donation as label', async () => {
    const { user } = await streamerWith(t, ['yoomoney']);
    const donor = new BrowserSession(t.app);
    await donor.get(`/r/${user.code}`);
    const dollars = await donor.postForm(`/r/${user.code}`, { username: 'Ann', amount: '100', currency: 'USD', message: 'hi' });
    assert.equal(dollars.statusCode, 422);
    assert.match(dollars.body, /YooMoney takes payments in RUB only/);
    const roubles = await donor.postForm(`/r/${user.code}`, { username: 'Ann', amount: '100', currency: 'RUB', message: 'hi' });
    assert.equal(roubles.statusCode, 200, roubles.body);
    assert.match(roubles.body, /<form method="post" action="https:\/\/yoomoney\.ru\/quickpay\/confirm" data-autosubmit-form>/);
    const label = /name="label" value="([^"]+)"/.exec(roubles.body)![1]!;
    assert.match(roubles.body, /name="sum" value="100\.00"/);
    assert.match(roubles.body, /name="receiver" value="410011234567890"/);
    assert.match(roubles.body, new RegExp(`name="successURL" value="https://alerts\\.example\\.com/r/${user.code}/paid/${label}"`));
    assert.equal((await donationsOf(t, user.id)).length, 0, 'nothing is recorded before YooMoney confirms');
    const pending = await t.database.db.selectFrom('pending_donations').selectAll().where('ref', '=', label).executeTakeFirstOrThrow();
    assert.deepEqual([pending.amount, pending.currency, pending.username, pending.message, pending.provider], [10000, 'RUB', 'Ann', 'hi', 'yoomoney']);
  });
});

describe('provider notifications', () => {
  let t: TestApp;
  before(async () => {
    t = await paymentsApp();
  });
  after(() => t?.close());

  const pendingFor = async (userId: number, provider: 'yoomoney' | 'stripe', amount = 10000, currency = 'RUB') =>
    createPendingDonation(t.database.db, { userId, provider, amount, currency, username: 'Vera', message: 'Привет стриму' });
  const yoomoney = (userId: number, body: string) => t.app.inject({ method: 'POST', url: `/payments/yoomoney/${userId}`, headers: FORM, payload: body });

  test('YooMoney: a good sha1_hash records the pending donation once; a retry records nothing more; the donor’s return page leads to the thanks', async () => {
    const { user } = await streamerWith(t, ['yoomoney']);
    const pending = await pendingFor(user.id, 'yoomoney');
    const body = yoomoneyBody({ label: pending.ref, operation_id: 'op-good-1' });
    const first = await yoomoney(user.id, body);
    assert.equal(first.statusCode, 200, first.body);
    const again = await yoomoney(user.id, body);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().duplicate, true);
    const rows = await donationsOf(t, user.id);
    assert.equal(rows.length, 1);
    assert.deepEqual([rows[0]!.amount, rows[0]!.currency, rows[0]!.username, rows[0]!.message, rows[0]!.payin_system], [10000, 'RUB', 'Vera', 'Привет стриму', 'YooMoney']);
    const back = await t.app.inject({ url: `/r/${user.code}/paid/${pending.ref}`, headers: { accept: 'text/html' } });
    assert.equal(back.statusCode, 303);
    assert.match(String(back.headers.location), new RegExp(`^/r/${user.code}/thanks/${rows[0]!.id}\\?t=`));
  });

  test('YooMoney: a forged hash, another amount or currency, another streamer’s label, a protected transfer — refused or ignored, nothing recorded', async () => {
    const { user } = await streamerWith(t, ['yoomoney']);
    const { user: other } = await streamerWith(t, ['yoomoney']);
    const pending = await pendingFor(user.id, 'yoomoney');
    const forged = await yoomoney(user.id, yoomoneyBody({ label: pending.ref }, 'not the secret'));
    assert.equal(forged.statusCode, 403);
    assert.match(forged.json().message, /sha1_hash/);
    assert.equal((await yoomoney(user.id, yoomoneyBody({ label: pending.ref }, undefined, '0'.repeat(40)))).statusCode, 403);
    const less = await yoomoney(user.id, yoomoneyBody({ label: pending.ref, withdraw_amount: '10.00', amount: '9.80' }));
    assert.equal(less.statusCode, 422);
    assert.match(less.json().message, /amount differs/);
    assert.equal((await yoomoney(user.id, yoomoneyBody({ label: pending.ref, currency: '840' }))).statusCode, 422);
    assert.equal((await yoomoney(other.id, yoomoneyBody({ label: pending.ref }))).statusCode, 422, 'a label belongs to one streamer');
    const codepro = await yoomoney(user.id, yoomoneyBody({ label: pending.ref, codepro: 'true' }));
    assert.equal(codepro.statusCode, 200);
    assert.match(codepro.json().ignored, /not received/);
    const unknown = await yoomoney(user.id, yoomoneyBody({ label: 'no-such-reference-000000' }));
    assert.equal(unknown.statusCode, 200);
    assert.ok(unknown.json().ignored);
    assert.equal((await yoomoney(user.id, yoomoneyBody({ label: pending.ref, test_notification: 'true' }))).json().test, true);
    assert.equal((await donationsOf(t, user.id)).length + (await donationsOf(t, other.id)).length, 0);
    assert.equal((await yoomoney(user.id, 'sha1_hash=%ZZ&&&=')).statusCode, 403, 'garbage is a refusal, not a crash');
  });

  test('Ko-fi: donations, shop orders and subscriptions record once each; commissions, other currencies and a wrong token do not', async () => {
    const { user } = await streamerWith(t, ['kofi']);
    const kofi = (body: string) => t.app.inject({ method: 'POST', url: `/payments/kofi/${user.id}`, headers: FORM, payload: body });
    const donation = kofiBody({ kofi_transaction_id: 'tx-donation-1' });
    assert.equal((await kofi(donation)).statusCode, 200);
    assert.equal((await kofi(donation)).json().duplicate, true);
    assert.equal((await kofi(kofiBody({ type: 'Shop Order', amount: '12.50', from_name: 'Shopper' }))).statusCode, 200);
    assert.equal((await kofi(kofiBody({ type: 'Subscription', amount: '5.00', is_public: false, message: 'private words' }))).statusCode, 200);
    assert.ok((await kofi(kofiBody({ type: 'Commission', amount: '100.00' }))).json().ignored);
    assert.ok((await kofi(kofiBody({ currency: 'GBP' }))).json().ignored);
    assert.equal((await kofi(kofiBody({ verification_token: 'wrong' }))).statusCode, 403);
    assert.equal((await kofi('data=%7Bnot%20json')).statusCode, 400);
    assert.equal((await kofi('nothing=here')).statusCode, 400);
    const rows = await donationsOf(t, user.id);
    assert.deepEqual(rows.map((r) => [r.username, r.amount, r.currency, r.message, r.payin_system]), [
      ['Jo Example', 300, 'USD', 'Good luck with the stream!', 'Ko-fi'],
      ['Shopper', 1250, 'USD', 'Good luck with the stream!', 'Ko-fi'],
      ['Jo Example', 500, 'USD', '', 'Ko-fi'],
    ]);
  });

  test('Stripe: a webhook signed with the endpoint secret records the checkout once; forged, unpaid and mismatched ones record nothing', async () => {
    const { user } = await streamerWith(t, ['stripe'], { currency: 'USD' });
    const pending = await pendingFor(user.id, 'stripe', 1250, 'USD');
    await attachCheckout(t.database.db, pending.id, 'cs_test_round1');
    const session = (fields: Record<string, unknown> = {}) => ({
      id: 'cs_test_round1', object: 'checkout.session', client_reference_id: pending.ref, metadata: { openalerts_ref: pending.ref, streamer_id: String(user.id) },
      amount_total: 1250, currency: 'usd', payment_status: 'paid', status: 'complete', ...fields,
    });
    const event = (type: string, object: Record<string, unknown>, id = `evt_${Math.random().toString(36).slice(2)}`) =>
      JSON.stringify({ id, object: 'event', type, api_version: '2025-01-01', created: Math.floor(Date.now() / 1000), data: { object } });
    const send = (payload: string, secret = STRIPE_WEBHOOK_SECRET) =>
      t.app.inject({ method: 'POST', url: '/payments/stripe/webhook', headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) }, payload });

    assert.equal((await send(event('checkout.session.completed', session()), 'whsec_forged')).statusCode, 400);
    assert.equal((await send(event('checkout.session.completed', session({ amount_total: 100 })))).statusCode, 422);
    assert.equal((await send(event('checkout.session.completed', session({ currency: 'eur' })))).statusCode, 422);
    assert.equal((await send(event('checkout.session.completed', session({ id: 'cs_test_other' })))).statusCode, 422, 'another checkout for this reference');
    assert.ok((await send(event('checkout.session.completed', session({ payment_status: 'unpaid' })))).json().ignored);
    assert.ok((await send(event('checkout.session.expired', session()))).json().ignored);
    assert.equal((await donationsOf(t, user.id)).length, 0);

    const paid = event('checkout.session.async_payment_succeeded', session());
    assert.equal((await send(paid)).json().donation_id > 0, true);
    assert.equal((await send(paid)).json().duplicate, true, 'the same event delivered again');
    assert.equal((await send(event('checkout.session.completed', session()))).json().duplicate, true, 'another event of the same checkout');
    const rows = await donationsOf(t, user.id);
    assert.deepEqual(rows.map((r) => [r.amount, r.currency, r.username, r.payin_system]), [[1250, 'USD', 'Vera', 'Stripe']]);
  });

  test('the signed intake: Standard Webhooks signature, 5-minute window, idempotency key; documented as an OpenAlerts extension', async () => {
    const { user, signingSecret } = await streamerWith(t, ['signed']);
    const url = `/api/v1/payments/${user.id}/donations`;
    const send = (body: string, headers: object) => t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: body });
    const body = JSON.stringify({ amount: '7.50', currency: 'EUR', username: 'Bot donor', message: 'From my shop', payin_system: 'My shop' });

    const created = await send(body, signWebhook(signingSecret, 'msg_1', body));
    assert.equal(created.statusCode, 201, created.body);
    const donation = created.json().data;
    assert.deepEqual([donation.amount, donation.currency, donation.username, donation.payin_system], [7.5, 'EUR', 'Bot donor', { title: 'My shop' }]);
    const retry = await send(body, signWebhook(signingSecret, 'msg_1', body));
    assert.equal(retry.statusCode, 200);
    assert.equal(retry.json().data.id, donation.id);
    const keyed = await send(body, { ...signWebhook(signingSecret, 'msg_2', body), 'idempotency-key': 'msg_1' });
    assert.equal(keyed.json().data.id, donation.id, 'Idempotency-Key wins over webhook-id');
    const other = JSON.stringify({ amount: 100, currency: 'EUR' });
    const reused = await send(other, signWebhook(signingSecret, 'msg_1', other));
    assert.equal(reused.statusCode, 400);
    assert.ok(reused.json().errors.idempotency_key);

    assert.equal((await send(body, signWebhook('whsec_' + Buffer.alloc(32, 7).toString('base64'), 'msg_3', body))).statusCode, 403);
    const stale = await send(body, signWebhook(signingSecret, 'msg_4', body, new Date(Date.now() - 6 * 60_000)));
    assert.equal(stale.statusCode, 403);
    assert.match(stale.json().message, /5 minutes/);
    assert.equal((await send(body, {})).statusCode, 403);
    const tampered = signWebhook(signingSecret, 'msg_5', body);
    assert.equal((await send(body.replace('7.50', '750.00'), tampered)).statusCode, 403);
    const invalid = JSON.stringify({ amount: -1, currency: 'XXX' });
    const rejected = await send(invalid, signWebhook(signingSecret, 'msg_6', invalid));
    assert.equal(rejected.statusCode, 400);
    assert.deepEqual(Object.keys(rejected.json().errors).sort(), ['amount', 'currency']);
    assert.equal((await send('[[[', signWebhook(signingSecret, 'msg_7', '[[['))).statusCode, 400);
    assert.equal((await donationsOf(t, user.id)).length, 1);

    const stranger = await makeUser(t.database.db);
    assert.equal((await t.app.inject({ method: 'POST', url: `/api/v1/payments/${stranger.id}/donations`, headers: { 'content-type': 'application/json', ...signWebhook(signingSecret, 'x', body) }, payload: body })).statusCode, 404);

    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const operation = doc.paths['/api/v1/payments/{user_id}/donations'].post;
    assert.equal(operation['x-openalerts-extension'], true);
    assert.match(operation.description, /OpenAlerts extension/);
  });
});

for (const dialect of await dialects()) {
  describe(`exactly once under concurrent retries (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await paymentsApp({ dialect });
    });
    after(() => t?.close());

    test('eight copies of one YooMoney notification at once record one donation', async () => {
      const { user } = await streamerWith(t, ['yoomoney']);
      const pending = await createPendingDonation(t.database.db, { userId: user.id, provider: 'yoomoney', amount: 10000, currency: 'RUB', username: 'Parallel', message: '' });
      const body = yoomoneyBody({ label: pending.ref, operation_id: `op-parallel-${dialect}` });
      const answers = await Promise.all(Array.from({ length: 8 }, () => t.app.inject({ method: 'POST', url: `/payments/yoomoney/${user.id}`, headers: FORM, payload: body })));
      assert.deepEqual(answers.map((a) => a.statusCode), Array(8).fill(200));
      assert.equal(answers.filter((a) => a.json().donation_id).length, 1);
      assert.equal((await donationsOf(t, user.id)).length, 1);
      const events = await t.database.db.selectFrom('outbox').select('id').where('type', '=', 'donation.created').where('user_id', '=', user.id).execute();
      assert.equal(events.length, 1, 'one alert');
    });
  });
}
