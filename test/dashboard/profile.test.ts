import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { authenticate } from '../../src/modules/accounts/accounts.service.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';
import { assertHtml, browserFor, PASSWORD, streamer, followAccepted } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const profileFields = (over: Record<string, string> = {}) => ({ name: 'New Name', avatar: 'https://cdn.example/a.png', language: 'de_DE', currency: 'EUR', ...over });

test('profile: name, avatar, language and main currency are saved together', async () => {
  const { user, browser } = await streamer(t);
  const page = await browser.get('/dashboard/profile');
  assertHtml(page);
  assert.match(page.body, new RegExp(`value="${user.name}"`));
  const res = await followAccepted(browser, await browser.postForm('/dashboard/profile', profileFields({ name: '  Renamed Streamer  ' })), '/dashboard/profile');
  assert.match(res.body, /Profile saved/);
  assert.match(res.body, /<span class="who">Renamed Streamer/, 'the page shows the new name at once');
  const row = await t.database.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
  assert.equal(row.name, 'Renamed Streamer');
  assert.equal(row.name_key, 'renamed streamer');
  assert.equal(row.avatar, 'https://cdn.example/a.png');
  assert.equal(row.language, 'de_DE');
  assert.equal(row.currency, 'EUR');
  assert.equal(row.code, user.code, 'the code (donor-page links) stays');
  // An empty avatar puts the generated one back.
  await browser.postForm('/dashboard/profile', profileFields({ name: 'Renamed Streamer', avatar: '' }));
  assert.equal((await t.database.db.selectFrom('users').select('avatar').where('id', '=', user.id).executeTakeFirstOrThrow()).avatar, null);
});

test('profile: every invalid field is reported beside its input and nothing is written', async () => {
  const taken = await makeUser(t.database.db, { name: 'Taken Name' });
  const { user, browser } = await streamer(t);
  await browser.get('/dashboard/profile');
  const bad = await browser.postForm('/dashboard/profile', { name: '!', avatar: 'javascript:alert(1)', language: 'xx_XX', currency: 'GBP' });
  assertHtml(bad, 422);
  assert.match(bad.body, /The name must be 2–32 letters/);
  assert.match(bad.body, /The avatar must be an http:\/\/ or https:\/\/ URL/);
  assert.match(bad.body, /The language must be one of/);
  assert.match(bad.body, /The currency must be one of EUR, USD, RUB, BYN, KZT, UAH, BRL, TRY/);
  assert.match(bad.body, /value="javascript:alert\(1\)"/, 'the form keeps what was typed');
  const long = await browser.postForm('/dashboard/profile', profileFields({ avatar: `https://cdn.example/${'a'.repeat(250)}` }));
  assertHtml(long, 422);
  assert.match(long.body, /The avatar must not be greater than 255 characters/);
  const dup = await browser.postForm('/dashboard/profile', profileFields({ name: taken.name.toUpperCase() }));
  assertHtml(dup, 422);
  assert.match(dup.body, /The name has already been taken/);
  const row = await t.database.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
  assert.equal(row.name, user.name);
  assert.equal(row.currency, user.currency);
  const forged = await browser.postForm('/dashboard/profile', profileFields({ _csrf: 'forged' }));
  assert.equal(forged.statusCode, 403);
});

test('password change: the current password is required, the rules apply, other sessions end', async () => {
  const { user, browser } = await streamer(t);
  const elsewhere = await browserFor(t, user);
  await browser.get('/dashboard/profile');
  const wrong = await browser.postForm('/dashboard/profile/password', { current_password: 'not it', password: 'a brand new passphrase', password_confirmation: 'a brand new passphrase' });
  assertHtml(wrong, 422);
  assert.match(wrong.body, /The current password is incorrect/);
  const weak = await browser.postForm('/dashboard/profile/password', { current_password: PASSWORD, password: 'password1', password_confirmation: 'password1' });
  assertHtml(weak, 422);
  assert.match(weak.body, /too easy to guess/);
  const mismatch = await browser.postForm('/dashboard/profile/password', { current_password: PASSWORD, password: 'a brand new passphrase', password_confirmation: 'a brand new passphrass' });
  assertHtml(mismatch, 422);
  assert.match(mismatch.body, /The two new passwords do not match/);
  assert.ok(await authenticate(t.database.db, user.email, PASSWORD), 'nothing changed yet');

  const ok = await followAccepted(browser, await browser.postForm('/dashboard/profile/password', { current_password: PASSWORD, password: 'a brand new passphrase', password_confirmation: 'a brand new passphrase' }), '/dashboard/profile');
  assert.match(ok.body, /Password changed/);
  assert.equal(await authenticate(t.database.db, user.email, PASSWORD), null);
  assert.ok(await authenticate(t.database.db, user.email, 'a brand new passphrase'));
  assert.equal((await browser.get('/dashboard/profile')).statusCode, 200, 'this session stays');
  assert.equal((await elsewhere.get('/dashboard/profile')).statusCode, 302, 'the other session ended');
  const anonymous = new BrowserSession(t.app);
  const loggedOut = await anonymous.postForm('/dashboard/profile/password', { current_password: 'x', password: 'y' }, false);
  assert.equal(loggedOut.statusCode, 302);
  assert.match(String(loggedOut.headers.location), /^\/login\?next=/);
});
