import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { streamerPaymentSetting } from '../../src/modules/payments/payment-settings.service.js';
import { makeUser, type TestApp } from '../helper.js';
import { browserFor } from '../dashboard/helpers.js';
import { paymentsApp } from './fixture.js';

describe('dashboard → Payments', () => {
  let t: TestApp;
  before(async () => {
    t = await paymentsApp({ env: { PAYMENT_PROVIDERS: 'yoomoney,kofi,signed', STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' } });
  });
  after(() => t?.close());

  test('a streamer turns YooMoney on with their wallet and secret; the secret is kept sealed and never shown back', async () => {
    const user = await makeUser(t.database.db);
    const browser = await browserFor(t, user);
    const page = await browser.get('/dashboard/payments');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`/payments/yoomoney/${user.id}`));
    assert.match(page.body, /Stripe is not enabled on this server/);
    assert.match(page.body, /href="\/dashboard\/payments" aria-current="page"/);

    const refused = await browser.postForm('/dashboard/payments/yoomoney', { enabled: '1', wallet: '12345', notification_secret: '' });
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body, /11 to 20 digits starting with 41/);
    assert.match(refused.body, /notification secret/);

    await browser.get('/dashboard/payments');
    const saved = await browser.postForm('/dashboard/payments/yoomoney', { enabled: '1', wallet: '4100 1123 4567 890', notification_secret: 'S3cret+Value' });
    assert.equal(saved.statusCode, 303);
    const shown = await browser.get('/dashboard/payments');
    assert.match(shown.body, /YooMoney settings saved/);
    assert.doesNotMatch(shown.body, /S3cret\+Value/);
    const stored = await t.database.db.selectFrom('payment_settings').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.doesNotMatch(stored.credentials_sealed ?? '', /S3cret|410011234567890/);
    const setting = await streamerPaymentSetting(t.database.db, t.app.ctx.secrets.encryptionKey, user.id, 'yoomoney');
    assert.deepEqual(setting, { enabled: true, credentials: { wallet: '410011234567890', notification_secret: 'S3cret+Value' } });

    // A blank secret keeps the stored one.
    await browser.postForm('/dashboard/payments/yoomoney', { enabled: '1', wallet: '410011234567890', notification_secret: '' });
    assert.equal((await streamerPaymentSetting(t.database.db, t.app.ctx.secrets.encryptionKey, user.id, 'yoomoney'))!.credentials.notification_secret, 'S3cret+Value');
    assert.equal((await browser.postForm('/dashboard/payments/stripe', { enabled: '1' })).statusCode, 404, 'not enabled on this instance');
    assert.equal((await browser.postForm('/dashboard/payments/paypal', { enabled: '1' })).statusCode, 404);
  });

  test('the signed intake: a whsec_ secret made on first save, shown to its streamer, and rotated', async () => {
    const user = await makeUser(t.database.db);
    const browser = await browserFor(t, user);
    await browser.get('/dashboard/payments');
    assert.equal((await browser.postForm('/dashboard/payments/signed', { enabled: '1' })).statusCode, 303);
    const first = (await streamerPaymentSetting(t.database.db, t.app.ctx.secrets.encryptionKey, user.id, 'signed'))!.credentials.secret!;
    assert.match(first, /^whsec_/);
    assert.ok((await browser.get('/dashboard/payments')).body.includes(first));
    assert.equal((await browser.postForm('/dashboard/payments/signed/rotate', {})).statusCode, 303);
    const second = await streamerPaymentSetting(t.database.db, t.app.ctx.secrets.encryptionKey, user.id, 'signed');
    assert.notEqual(second!.credentials.secret, first);
    assert.equal(second!.enabled, true);
  });
});
