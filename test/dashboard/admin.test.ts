import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { authenticate } from '../../src/modules/accounts/accounts.service.js';
import { loadRates } from '../../src/modules/currencies/currencies.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { buildTestApp, issueToken, makeApp, type TestApp } from '../helper.js';
import { assertHtml, browserFor, PASSWORD, streamer, followAccepted } from './helpers.js';

let t: TestApp;
let admin: Awaited<ReturnType<typeof streamer>>;
before(async () => {
  t = await buildTestApp();
  admin = await streamer(t, { admin: true, name: 'The Admin' });
});
after(() => t.close());

test('admin pages are 403 for streamers (with a page, not a redirect) and refuse their posts', async () => {
  const { browser } = await streamer(t);
  for (const url of ['/admin/users', '/admin/rates', '/admin/merchants']) {
    const res = await browser.get(url);
    assertHtml(res, 403);
    assert.match(res.body, /Error 403/);
  }
  await browser.get('/dashboard');
  const deactivate = await browser.postForm(`/admin/users/${admin.user.id}/active`, { active: '0' });
  assert.equal(deactivate.statusCode, 403);
  const rate = await browser.postForm('/admin/rates', { currency: 'EUR', rate: '0.5' });
  assert.equal(rate.statusCode, 403);
  assert.equal((await t.database.db.selectFrom('users').select('is_active').where('id', '=', admin.user.id).executeTakeFirstOrThrow()).is_active, 1);
  assert.notEqual((await loadRates(t.database.db)).EUR, 0.5);
});

test('users: listed with search; no button to deactivate yourself', async () => {
  await streamer(t, { name: 'Findable One', email: 'findable@example.test' });
  const all = await admin.browser.get('/admin/users');
  assertHtml(all);
  assert.match(all.body, /Findable One/);
  assert.match(all.body, /<small>you<\/small>/);
  assert.doesNotMatch(all.body, new RegExp(`action="/admin/users/${admin.user.id}/active"`));
  const found = await admin.browser.get('/admin/users?q=FINDABLE');
  assert.match(found.body, /findable@example.test/);
  assert.doesNotMatch(found.body, new RegExp(`data-user-id="${admin.user.id}"`));
  assert.match(found.body, /1 account\./);
  const self = await admin.browser.postForm(`/admin/users/${admin.user.id}/active`, { active: '0' });
  assertHtml(self, 403);
  assert.match(self.body, /You cannot deactivate your own account/);
});

test('deactivation: the streamer is logged out, cannot log in, their tokens stop at once; activation restores them', async () => {
  const { user, browser } = await streamer(t);
  const { app: client } = await makeApp(t, admin.user.id);
  const token = await issueToken(t, { userId: user.id, clientId: client.client_id, scopes: ['oauth-user-show', 'oauth-donation-index'] });
  const api = () => t.app.inject({ url: '/api/v1/user/oauth', headers: { authorization: `Bearer ${token}` } });
  assert.equal((await api()).statusCode, 200, 'the token works and its verification is cached');
  assert.equal((await browser.get('/dashboard')).statusCode, 200);

  await admin.browser.get('/admin/users');
  const off = await followAccepted(admin.browser, await admin.browser.postForm(`/admin/users/${user.id}/active`, { active: '0' }), '/admin/users');
  assert.match(off.body, /is deactivated/);
  assert.match(off.body, new RegExp(`<tr data-user-id="${user.id}">[\\s\\S]*?deactivated`));
  const refused = await api();
  assert.equal(refused.statusCode, 401);
  assert.deepEqual(refused.json(), { message: 'Unauthenticated.' });
  assert.equal((await browser.get('/dashboard')).statusCode, 302, 'the session ended');
  assert.equal(await authenticate(t.database.db, user.email, PASSWORD), null);
  assert.equal((await t.database.db.selectFrom('sessions').select('user_id').where('user_id', '=', user.id).execute()).length, 0);
  await assert.rejects(createDonation(t.database.db, { userId: user.id, amount: '1', currency: 'USD' }), /no longer accepts donations/);

  const on = await followAccepted(admin.browser, await admin.browser.postForm(`/admin/users/${user.id}/active`, { active: '1' }), '/admin/users');
  assert.match(on.body, /is active again/);
  assert.equal((await api()).statusCode, 200);
  assert.ok(await authenticate(t.database.db, user.email, PASSWORD));
  const again = await browserFor(t, user);
  assert.equal((await again.get('/dashboard')).statusCode, 200);

  const forged = await admin.browser.postForm(`/admin/users/${user.id}/active`, { active: '0', _csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
  assert.equal((await api()).statusCode, 200, 'a forged request changes nothing');
  assert.equal((await admin.browser.postForm('/admin/users/999999/active', { active: '0' })).statusCode, 404);
});

test('currency rates: listed; set one; bad input shown in the form', async () => {
  const page = await admin.browser.get('/admin/rates');
  assertHtml(page);
  assert.match(page.body, /<td data-label="Currency">USD<\/td>/);
  const ok = await followAccepted(admin.browser, await admin.browser.postForm('/admin/rates', { currency: 'EUR', rate: '0.9123', as_of: '2025-03-01' }), '/admin/rates');
  assert.match(ok.body, /EUR rate saved/);
  assert.match(ok.body, /<td data-label="Currency">EUR<\/td><td data-label="Per 1 USD" class="num">0\.9123<\/td><td data-label="As of">2025-03-01<\/td>/);
  assert.equal((await loadRates(t.database.db)).EUR, 0.9123);

  const bad = await admin.browser.postForm('/admin/rates', { currency: 'EUR', rate: '-1', as_of: '2025-13-01' });
  assertHtml(bad, 422);
  assert.match(bad.body, /The rate must be a positive number/);
  assert.match(bad.body, /value="-1"/);
  const usd = await admin.browser.postForm('/admin/rates', { currency: 'USD', rate: '2' });
  assertHtml(usd, 422);
  assert.match(usd.body, /USD is the base currency/);
  const empty = await admin.browser.postForm('/admin/rates', { currency: 'EUR', rate: '' });
  assertHtml(empty, 422);
  assert.equal((await loadRates(t.database.db)).EUR, 0.9123);
});
