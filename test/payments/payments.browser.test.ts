import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createVariation } from '../../src/modules/widgets/variations.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { ChromiumPages, chromiumMissing, screenshot } from '../browser/chromium.js';
import type { TestApp } from '../helper.js';
import { freePort } from '../process.js';
import { until } from '../wait.js';
import { donationsOf, FORM, kofiBody, paymentsApp, STRIPE_WEBHOOK_SECRET, streamerWith, yoomoneyBody } from './fixture.js';
import { StripeStandIn } from './stripe-standin.js';

const skip = chromiumMissing();

let t: TestApp;
let base: string;
let chrome: ChromiumPages;
let standIn: StripeStandIn;

function newPage(): Promise<Page> {
  return chrome.newPage({ viewport: { width: 900, height: 700 } });
}

async function streamerOnStream(providers: Parameters<typeof streamerWith>[1], currency: string) {
  const { user } = await streamerWith(t, providers, { currency: currency as any });
  await createVariation(t.database.db, user.id, { type: 'donation', name: 'donation', minAmount: '0', durationMs: '4000', layout: 'image-above-text', textTemplate: '{username} — {amount} {currency}', enabled: '1' });
  const widget = await newPage();
  const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, user.id);
  assert.equal((await widget.goto(`${base}/widget/alerts?token=${token}`))?.status(), 200);
  await widget.waitForSelector('body[data-state="live"]', { timeout: 10_000 });
  return { user, widget };
}

describe('payment providers in Chromium', { skip }, () => {
  before(async () => {
    standIn = new StripeStandIn(STRIPE_WEBHOOK_SECRET);
    const stripeApi = await standIn.start();
    // PUBLIC_URL must be where the browser comes back to after paying: listen on a port chosen first.
    const port = await freePort();
    t = await paymentsApp({ stripeApi, env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    base = `http://127.0.0.1:${port}`;
    standIn.webhookUrl = `${base}/payments/stripe/webhook`;
    chrome = await ChromiumPages.launch();
  });
  afterEach(() => chrome.closePages());
  after(async () => {
    await chrome?.close();
    await t?.close();
    await standIn?.stop();
  });

  test('Stripe test-mode checkout round trip (against the stand-in): donor page → hosted checkout → signed webhook → widget alert → thanks', async () => {
    const { user, widget } = await streamerOnStream(['stripe'], 'USD');
    const donor = await newPage();
    await donor.goto(`${base}/r/${user.code}`);
    await donor.fill('input[name="username"]', 'Stripe Fan');
    await donor.fill('input[name="amount"]', '12.50');
    await donor.selectOption('select[name="currency"]', 'EUR');
    await donor.fill('textarea[name="message"]', 'Paid by card');
    await donor.check('input[name="provider"][value="stripe"]');
    await screenshot(donor, 'payments-donor-choice');
    await donor.click('form.donor-form button[type="submit"]');
    await donor.waitForURL(/\/pay\/cs_test_/);
    assert.equal(await donor.textContent('#summary'), `Donation to ${user.name}: 12.50 EUR`);
    assert.equal((await donationsOf(t, user.id)).length, 0, 'nothing before the payment');
    await donor.click('#pay');
    await donor.waitForURL(/\/thanks\//, { timeout: 15_000 });
    assert.match(await donor.textContent('h1') ?? '', /Thank you/);
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Stripe Fan — 12.50 EUR');
    assert.deepEqual(standIn.deliveries.at(-1), { type: 'checkout.session.completed', status: 200 });
    const rows = await donationsOf(t, user.id);
    assert.deepEqual(rows.map((r) => [r.username, r.amount, r.currency, r.payin_system]), [['Stripe Fan', 1250, 'EUR', 'Stripe']]);
    await screenshot(donor, 'payments-stripe-thanks');
  });

  test('YooMoney: the donor page posts the quickpay form; a notification with a bad hash shows nothing, the good one alerts', async () => {
    const { user, widget } = await streamerOnStream(['yoomoney'], 'RUB');
    const donor = await newPage();
    let posted = '';
    // YooMoney itself is never reached from a test: its quickpay page is answered here.
    await donor.context().route('https://yoomoney.ru/**', async (route) => {
      posted = route.request().postData() ?? '';
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>YooMoney (test)</title><h1>YooMoney quickpay (test)</h1>' });
    });
    await donor.goto(`${base}/r/${user.code}?lang=ru_RU`);
    await donor.fill('input[name="username"]', 'Вера');
    await donor.fill('input[name="amount"]', '150');
    await donor.selectOption('select[name="currency"]', 'RUB');
    await donor.check('input[name="provider"][value="yoomoney"]');
    await donor.click('form.donor-form button[type="submit"]');
    await donor.waitForURL('https://yoomoney.ru/quickpay/confirm');
    const fields = new URLSearchParams(posted);
    assert.equal(fields.get('sum'), '150.00');
    assert.equal(fields.get('receiver'), '410011234567890');
    const label = fields.get('label')!;
    assert.ok(label);

    const notify = (body: string) => fetch(`${base}/payments/yoomoney/${user.id}`, { method: 'POST', headers: FORM, body });
    const forged = await notify(yoomoneyBody({ label, withdraw_amount: '150.00', amount: '147.00' }, 'guessed secret'));
    assert.equal(forged.status, 403);
    const good = await notify(yoomoneyBody({ label, withdraw_amount: '150.00', amount: '147.00', operation_id: 'op-browser-1' }));
    assert.equal(good.status, 200);
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Вера — 150 RUB');
    assert.equal((await donationsOf(t, user.id)).length, 1, 'the forged notification recorded nothing');
    await donor.goto(fields.get('successURL')!);
    await donor.waitForURL(/\/thanks\//);
    assert.match(await donor.textContent('h1') ?? '', /Спасибо/);
  });

  test('Ko-fi: the donor page links the streamer’s Ko-fi page; a Ko-fi webhook alerts on the widget', async () => {
    const { user, widget } = await streamerOnStream(['kofi'], 'USD');
    const donor = await newPage();
    await donor.goto(`${base}/r/${user.code}`);
    assert.equal(await donor.getAttribute('.donor-kofi a', 'href'), 'https://ko-fi.com/teststreamer');
    const res = await fetch(`${base}/payments/kofi/${user.id}`, { method: 'POST', headers: FORM, body: kofiBody({ from_name: 'Coffee Friend', amount: '5.00', currency: 'USD' }) });
    assert.equal(res.status, 200);
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Coffee Friend — 5 USD');
  });

  test('no script errors or CSP violations on any page', async () => {
    await until(async () => true, 100, 'settle');
    assert.deepEqual(chrome.problems(), []);
  });
});
