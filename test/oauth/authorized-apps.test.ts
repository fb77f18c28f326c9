import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';
import { Browser, REDIRECT, authorizeUrl, consent, exchange, fixture, hiddenFields, obtainCode, redirectParams, sessionFor, tokenRequest, assertOAuthError } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

test('lists the apps with live grants (scopes in plain words, since) and revokes one with its CSRF-protected button', async () => {
  const f = await fixture(t);
  const { app: hostile } = await createApp(t.database.db, t.app.ctx.secrets.encryptionKey, { ownerId: f.user.id, name: '<b>Bold</b> & co', redirectUris: [REDIRECT] });

  const tokens = (await exchange(t, f, await obtainCode(f, { scope: 'oauth-user-show oauth-donation-index' }))).json();
  const implicit = redirectParams(await consent(f.browser, { response_type: 'token', client_id: String(hostile.client_id), scope: 'oauth-custom_alert-store' }), 'fragment').get('access_token')!;
  const pendingCode = await obtainCode(f, { scope: 'oauth-user-show' }); // issued, not yet exchanged

  // Another streamer's grant to the same application is theirs alone.
  const other = await makeUser(t.database.db);
  const otherBrowser = await sessionFor(t, other.id);
  const otherCode = redirectParams(await consent(otherBrowser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' })).get('code')!;
  const otherTokens = (await exchange(t, { ...f, user: other, browser: otherBrowser }, otherCode)).json();

  const page = await f.browser.get('/dashboard/authorized-apps');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /Test client/);
  assert.match(page.body, /See your profile: name, e-mail and avatar/);
  assert.match(page.body, /View your donations/);
  assert.match(page.body, /Show custom alerts on your stream/);
  assert.match(page.body, /&lt;b&gt;Bold&lt;\/b&gt; &amp; co/);
  assert.doesNotMatch(page.body, /<b>Bold<\/b>/);
  assert.match(page.body, new RegExp(new Date().toISOString().slice(0, 10)));
  assert.match(page.body, /<meta name="viewport"/);

  assert.ok(await t.app.ctx.tokens.verify(tokens.access_token)); // cached
  const action = `/dashboard/authorized-apps/${f.clientId}/revoke`;
  const fields = hiddenFields(page.body, action);

  const forged = await f.browser.post(action, { _csrf: 'nope' });
  assert.equal(forged.statusCode, 403);
  assert.ok(await t.app.ctx.tokens.verify(tokens.access_token));

  const res = await f.browser.post(action, fields);
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/dashboard/authorized-apps');

  assert.equal(await t.app.ctx.tokens.verify(tokens.access_token), null);
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: tokens.refresh_token }), 400, 'invalid_grant');
  assertOAuthError(await exchange(t, f, pendingCode), 400, 'invalid_grant');
  assert.ok(await t.app.ctx.tokens.verify(implicit), 'the other application keeps its access');
  assert.ok(await t.app.ctx.tokens.verify(otherTokens.access_token), "the other streamer's grant is untouched");

  const after = await f.browser.get('/dashboard/authorized-apps');
  assert.doesNotMatch(after.body, /Test client/);
  assert.match(after.body, /Bold/);
  // Consent is asked again.
  const again = await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' }));
  assert.equal(again.statusCode, 200);
});

test('needs a session; unknown ids are harmless', async () => {
  const anonymous = new Browser(t.app);
  const res = await anonymous.get('/dashboard/authorized-apps');
  assert.equal(res.statusCode, 302);
  assert.match(String(res.headers.location), /^\/login\?next=/);

  const f = await fixture(t);
  const page = await f.browser.get('/dashboard/authorized-apps');
  assert.match(page.body, /No application has access/);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  for (const id of ['999999', 'abc', '1'.repeat(40)]) {
    const r = await f.browser.post(`/dashboard/authorized-apps/${id}/revoke`, { _csrf: csrf });
    assert.equal(r.statusCode, 303, id);
  }
});
