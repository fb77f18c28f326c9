import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setPublicClient } from '../../src/oauth/clients.js';
import { buildTestApp, makeApp, makeUser, type TestApp } from '../helper.js';
import {
  Browser,
  REDIRECT,
  authorizeUrl,
  consent,
  exchange,
  fixture,
  hiddenFields,
  logIn,
  pkcePair,
  redirectParams,
  tokenRequest,
  assertOAuthError,
} from './helpers.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

describe('authorization code flow, as a browser does it', () => {
  test('log-in form → authorize → consent → code & state → token → bearer works', async () => {
    const user = await makeUser(t.database.db);
    const { app: client, clientSecret } = await makeApp(t, user.id);
    const browser = new Browser(t.app);
    const params = { response_type: 'code', client_id: String(client.client_id), redirect_uri: REDIRECT, scope: 'oauth-user-show oauth-donation-index', state: 'xyz 123' };

    // No session: the log-in page, coming back here afterwards.
    const first = await browser.get(authorizeUrl(params));
    assert.equal(first.statusCode, 302);
    const loginUrl = String(first.headers.location);
    assert.match(loginUrl, /^\/login\?next=/);
    const next = new URL(loginUrl, 'http://x').searchParams.get('next')!;
    assert.equal(next, authorizeUrl(params));

    const form = await browser.get(loginUrl);
    assert.equal(form.statusCode, 200);
    const login = await browser.post('/login', { ...hiddenFields(form.body, '/login'), email: user.email, password: 'correct horse battery' });
    assert.equal(login.statusCode, 303);
    assert.equal(login.headers.location, next);

    const page = await browser.get(String(login.headers.location));
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(page.body, /Test client/);
    assert.match(page.body, /See your profile: name, e-mail and avatar/);
    assert.match(page.body, /View your donations/);
    assert.doesNotMatch(page.body, /Show custom alerts/);
    assert.match(page.body, /value="allow"/);
    assert.match(page.body, /value="deny"/);

    const allowed = await browser.post('/oauth/authorize', { ...hiddenFields(page.body, '/oauth/authorize'), decision: 'allow' });
    assert.equal(allowed.statusCode, 303);
    const location = new URL(String(allowed.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get('state'), 'xyz 123');
    const code = location.searchParams.get('code')!;
    assert.ok(code.length >= 40);

    const res = await tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(client.client_id), client_secret: clientSecret, redirect_uri: REDIRECT, code });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['token_type', 'expires_in', 'access_token', 'refresh_token']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 365 * 24 * 3600);
    assert.ok(Number.isInteger(body.expires_in));

    const info = await t.app.ctx.tokens.verify(body.access_token);
    assert.ok(info);
    assert.equal(info.userId, user.id);
    assert.equal(info.clientId, client.client_id);
    assert.deepEqual([...info.scopes], ['oauth-user-show', 'oauth-donation-index']);
  });

  test('the consent POST needs a valid CSRF token', async () => {
    const f = await fixture(t);
    const page = await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' }));
    const fields = hiddenFields(page.body, '/oauth/authorize');
    const res = await f.browser.post('/oauth/authorize', { ...fields, _csrf: 'forged', decision: 'allow' });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers.location, undefined);
    const none = await f.browser.post('/oauth/authorize', { ...fields, _csrf: '', decision: 'allow' });
    assert.equal(none.statusCode, 403);
  });

  test('a tampered hidden field is validated again on POST', async () => {
    const f = await fixture(t);
    const page = await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' }));
    const fields = hiddenFields(page.body, '/oauth/authorize');
    const evil = await f.browser.post('/oauth/authorize', { ...fields, redirect_uri: 'https://evil.example/steal', decision: 'allow' });
    assert.equal(evil.statusCode, 400);
    assert.equal(evil.headers.location, undefined);
    const scoped = await f.browser.post('/oauth/authorize', { ...fields, scope: 'oauth-user-show admin', decision: 'allow' });
    assert.equal(redirectParams(scoped).get('error'), 'invalid_scope');
  });

  test('Deny redirects with error=access_denied and the state', async () => {
    const f = await fixture(t);
    const res = await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', state: 'st' }, 'deny');
    assert.equal(res.statusCode, 303);
    const params = redirectParams(res);
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), 'st');
    assert.equal(params.get('code'), null);
  });

  test('the consent page escapes the application name', async () => {
    const user = await makeUser(t.database.db);
    const { createApp } = await import('../../src/modules/apps/apps.service.js');
    const { app: client } = await createApp(t.database.db, t.app.ctx.secrets.encryptionKey, { ownerId: user.id, name: '<script>alert(1)</script>"x', redirectUris: [REDIRECT] });
    const browser = new Browser(t.app);
    await logIn(browser, user.email);
    const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: String(client.client_id), scope: 'oauth-user-show', state: '"><img src=x>' }));
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /<script>alert/);
    assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;x/);
    assert.doesNotMatch(page.body, /"><img src=x>/);
    assert.equal(hiddenFields(page.body, '/oauth/authorize').state, '"><img src=x>');
  });
});

describe('skip consent', () => {
  test('already granted the same scopes or fewer → straight to the redirect; more → consent again', async () => {
    const f = await fixture(t);
    const base = { response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT };
    const first = await consent(f.browser, { ...base, scope: 'oauth-user-show oauth-donation-index' });
    const tokens = await exchange(t, f, redirectParams(first).get('code')!);
    assert.equal(tokens.statusCode, 200);

    const same = await f.browser.get(authorizeUrl({ ...base, scope: 'oauth-donation-index oauth-user-show', state: 'a' }));
    assert.equal(same.statusCode, 302);
    assert.ok(redirectParams(same).get('code'));
    assert.equal(redirectParams(same).get('state'), 'a');

    const fewer = await f.browser.get(authorizeUrl({ ...base, scope: 'oauth-user-show' }));
    assert.equal(fewer.statusCode, 302);
    assert.ok(redirectParams(fewer).get('code'));

    const more = await f.browser.get(authorizeUrl({ ...base, scope: 'oauth-user-show oauth-custom_alert-store' }));
    assert.equal(more.statusCode, 200);
    assert.match(more.body, /Show custom alerts on your stream/);
  });

  test('a revoked grant asks again', async () => {
    const f = await fixture(t);
    const base = { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' };
    const first = await consent(f.browser, base);
    const tokens = (await exchange(t, f, redirectParams(first).get('code')!)).json();
    const revoke = await t.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: tokens.refresh_token, client_id: f.clientId, client_secret: f.clientSecret } });
    assert.equal(revoke.statusCode, 200);
    const again = await f.browser.get(authorizeUrl(base));
    assert.equal(again.statusCode, 200);
  });
});

describe('implicit grant', () => {
  test('token in the fragment with token_type, expires_in and state; no refresh token', async () => {
    const f = await fixture(t);
    const res = await consent(f.browser, { response_type: 'token', client_id: String(f.clientId), redirect_uri: REDIRECT, scope: 'oauth-user-show oauth-donation-subscribe', state: 'imp' });
    assert.equal(res.statusCode, 303);
    const location = String(res.headers.location);
    assert.ok(location.startsWith(`${REDIRECT}#`), location);
    const fragment = redirectParams(res, 'fragment');
    assert.equal(fragment.get('token_type'), 'Bearer');
    assert.equal(fragment.get('expires_in'), String(365 * 24 * 3600));
    assert.equal(fragment.get('state'), 'imp');
    assert.equal(fragment.get('refresh_token'), null);
    assert.equal(new URL(location).search, '');
    const info = await t.app.ctx.tokens.verify(fragment.get('access_token')!);
    assert.ok(info);
    assert.deepEqual([...info.scopes], ['oauth-user-show', 'oauth-donation-subscribe']);
  });

  test('implicit errors go back in the fragment', async () => {
    const f = await fixture(t);
    const res = await f.browser.get(authorizeUrl({ response_type: 'token', client_id: String(f.clientId), scope: 'oauth-nope', state: 'q' }));
    assert.equal(res.statusCode, 302);
    const fragment = redirectParams(res, 'fragment');
    assert.equal(fragment.get('error'), 'invalid_scope');
    assert.equal(fragment.get('state'), 'q');
  });
});

describe('authorization request validation', () => {
  test('unknown client, unregistered or ambiguous redirect_uri: a 400 page, never a redirect', async () => {
    const f = await fixture(t, [REDIRECT, 'https://client.example.test/other']);
    const cases: Record<string, string>[] = [
      { response_type: 'code', client_id: '999999', redirect_uri: REDIRECT },
      { response_type: 'code', client_id: 'abc', redirect_uri: REDIRECT },
      { response_type: 'code', redirect_uri: REDIRECT },
      { response_type: 'code', client_id: '', redirect_uri: REDIRECT },
      { response_type: 'code', client_id: '1'.repeat(30), redirect_uri: REDIRECT },
      { response_type: 'code', client_id: String(f.clientId), redirect_uri: 'https://evil.example/cb' },
      { response_type: 'code', client_id: String(f.clientId), redirect_uri: `${REDIRECT}/` },
      { response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT.toUpperCase() },
      { response_type: 'code', client_id: String(f.clientId), redirect_uri: `${REDIRECT}?x=1` },
      { response_type: 'code', client_id: String(f.clientId), redirect_uri: 'x'.repeat(3000) },
      { response_type: 'code', client_id: String(f.clientId) }, // two registered: must name one
      { response_type: 'nonsense', client_id: '999999', redirect_uri: REDIRECT },
    ];
    for (const params of cases) {
      const res = await f.browser.get(authorizeUrl(params));
      assert.equal(res.statusCode, 400, JSON.stringify(params));
      assert.equal(res.headers.location, undefined);
      assert.match(String(res.headers['content-type']), /^text\/html/);
    }
    // Repeated client_id or redirect_uri: ambiguous, so a page too.
    const twice = await f.browser.get(`/oauth/authorize?response_type=code&client_id=${f.clientId}&client_id=${f.clientId}`);
    assert.equal(twice.statusCode, 400);
    const twiceUri = await f.browser.get(`/oauth/authorize?response_type=code&client_id=${f.clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&redirect_uri=x`);
    assert.equal(twiceUri.statusCode, 400);
    assert.equal(twiceUri.headers.location, undefined);
  });

  test('missing redirect_uri with exactly one registered uses it', async () => {
    const f = await fixture(t);
    const res = await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' });
    assert.ok(String(res.headers.location).startsWith(`${REDIRECT}?code=`));
    // ... and the token request may then omit it too (RFC 6749 §4.1.3).
    const code = redirectParams(res).get('code')!;
    const tokens = await tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(f.clientId), client_secret: f.clientSecret, code });
    assert.equal(tokens.statusCode, 200);
  });

  test('other errors redirect back with error= and state', async () => {
    const f = await fixture(t);
    const base = { client_id: String(f.clientId), redirect_uri: REDIRECT, state: 'st8' };
    const expect = async (params: Record<string, string>, error: string) => {
      const res = await f.browser.get(authorizeUrl({ ...base, ...params }));
      assert.equal(res.statusCode, 302, JSON.stringify(params));
      const q = redirectParams(res);
      assert.equal(q.get('error'), error, JSON.stringify(params));
      assert.equal(q.get('state'), 'st8');
      assert.ok(q.get('error_description'));
      assert.equal(q.get('code'), null);
    };
    await expect({ response_type: 'code', scope: 'oauth-user-show oauth-everything' }, 'invalid_scope');
    await expect({ response_type: 'code', scope: 'OAUTH-USER-SHOW' }, 'invalid_scope');
    await expect({ scope: 'oauth-user-show' }, 'invalid_request');
    await expect({ response_type: '', scope: 'oauth-user-show' }, 'invalid_request');
    await expect({ response_type: 'id_token', scope: 'oauth-user-show' }, 'unsupported_response_type');
    await expect({ response_type: 'x'.repeat(100), scope: 'oauth-user-show' }, 'invalid_request');
    await expect({ response_type: 'code', scope: 'oauth-user-show '.repeat(100) }, 'invalid_request');
    await expect({ response_type: 'code', code_challenge: 'short' }, 'invalid_request');
    await expect({ response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'S512' }, 'invalid_request');
    await expect({ response_type: 'code', code_challenge_method: 'S256' }, 'invalid_request');
    const repeated = await f.browser.get(`${authorizeUrl({ ...base, scope: 'oauth-user-show' })}&response_type=code&response_type=token`);
    assert.equal(redirectParams(repeated).get('error'), 'invalid_request');
    const longState = await f.browser.get(authorizeUrl({ ...base, response_type: 'code', state: 's'.repeat(3000) }));
    assert.equal(redirectParams(longState).get('error'), 'invalid_request');
    assert.equal(redirectParams(longState).get('state'), null);
  });

  test('scope space-, +- and %20-delimited, and as repeated keys', async () => {
    const f = await fixture(t);
    const id = f.clientId;
    for (const query of [
      `response_type=code&client_id=${id}&scope=oauth-user-show+oauth-goal-subscribe`,
      `response_type=code&client_id=${id}&scope=oauth-user-show%20oauth-goal-subscribe`,
      `response_type=code&client_id=${id}&scope=oauth-user-show%2Boauth-goal-subscribe`,
      `response_type=code&client_id=${id}&scope=oauth-user-show&scope=oauth-goal-subscribe`,
    ]) {
      const page = await f.browser.get(`/oauth/authorize?${query}`);
      assert.equal(page.statusCode, 200, query);
      assert.equal(hiddenFields(page.body, '/oauth/authorize').scope, 'oauth-user-show oauth-goal-subscribe');
    }
  });

  test('a redirect_uri with its own query keeps it', async () => {
    const uri = 'https://client.example.test/cb?tenant=7';
    const f = await fixture(t, [uri]);
    const res = await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', state: 'k' });
    const location = new URL(String(res.headers.location));
    assert.equal(location.searchParams.get('tenant'), '7');
    assert.ok(location.searchParams.get('code'));
  });
});

describe('PKCE', () => {
  // RFC 9700 §2.1.1: plain only where the operator allows it (PKCE_ALLOW_PLAIN).
  let plainAllowed: TestApp;
  before(async () => {
    plainAllowed = await buildTestApp({ env: { PKCE_ALLOW_PLAIN: 'true' } });
  });
  after(() => plainAllowed.close());

  for (const method of ['S256', 'plain'] as const) {
    test(`${method}: the right verifier gets tokens, a wrong or missing one does not`, async () => {
      const on = method === 'plain' ? plainAllowed : t;
      const f = await fixture(on);
      const { verifier, challenge } = pkcePair(method);
      const params = { response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT, scope: 'oauth-user-show', code_challenge: challenge, code_challenge_method: method };
      const code = redirectParams(await consent(f.browser, params)).get('code')!;

      assertOAuthError(await exchange(on, f, code), 400, 'invalid_request');
      assertOAuthError(await exchange(on, f, code, { code_verifier: pkcePair(method).verifier }), 400, 'invalid_grant');
      assertOAuthError(await exchange(on, f, code, { code_verifier: 'short' }), 400, 'invalid_request');
      // A failed verification does not burn the code: the client can still redeem it.
      const ok = await exchange(on, f, code, { code_verifier: verifier });
      assert.equal(ok.statusCode, 200, ok.body);
    });
  }

  test('with PKCE_ALLOW_PLAIN, code_challenge_method defaults to plain', async () => {
    const f = await fixture(plainAllowed);
    const { verifier } = pkcePair('plain');
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', code_challenge: verifier })).get('code')!;
    const ok = await tokenRequest(plainAllowed.app, { grant_type: 'authorization_code', client_id: String(f.clientId), client_secret: f.clientSecret, code, code_verifier: verifier });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('by default plain is refused, stated or implied by an absent method, back to the client with state', async () => {
    const f = await fixture(t);
    const { verifier } = pkcePair('plain');
    for (const method of ['plain', undefined]) {
      const res = await f.browser.get(
        authorizeUrl({ response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', state: 's', code_challenge: verifier, ...(method ? { code_challenge_method: method } : {}) }),
      );
      const back = redirectParams(res);
      assert.equal(back.get('error'), 'invalid_request', String(method));
      assert.match(back.get('hint') ?? back.get('error_description') ?? '', /S256/);
      assert.equal(back.get('state'), 's');
    }
    const meta = (await t.app.inject('/.well-known/oauth-authorization-server')).json();
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    const metaPlain = (await plainAllowed.app.inject('/.well-known/oauth-authorization-server')).json();
    assert.deepEqual(metaPlain.code_challenge_methods_supported, ['S256', 'plain']);
  });

  test('a code_verifier for a code issued without a challenge is refused (downgrade)', async () => {
    const f = await fixture(t);
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' })).get('code')!;
    assertOAuthError(await exchange(t, f, code, { code_verifier: pkcePair().verifier }), 400, 'invalid_grant');
  });

  test('public clients must use PKCE and then need no secret', async () => {
    const f = await fixture(t);
    await setPublicClient(t.database.db, f.clientId, true);
    const without = await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', state: 'p' }));
    assert.equal(redirectParams(without).get('error'), 'invalid_request');
    assert.equal(redirectParams(without).get('state'), 'p');

    const { verifier, challenge } = pkcePair();
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show', code_challenge: challenge, code_challenge_method: 'S256' })).get('code')!;
    const res = await tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(f.clientId), code, code_verifier: verifier });
    assert.equal(res.statusCode, 200, res.body);
    const refreshed = await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), refresh_token: res.json().refresh_token });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials', client_id: String(f.clientId) }), 400, 'unauthorized_client');
    // A confidential client without its secret is refused.
    await setPublicClient(t.database.db, f.clientId, false);
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials', client_id: String(f.clientId) }), 401, 'invalid_client');
  });
});

describe('authorization codes', () => {
  test('single use: a second exchange fails and revokes every token issued from the code', async () => {
    const f = await fixture(t);
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' })).get('code')!;
    const first = (await exchange(t, f, code)).json();
    assert.ok(await t.app.ctx.tokens.verify(first.access_token)); // cached now
    const refreshed = (await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: first.refresh_token })).json();
    assert.ok(await t.app.ctx.tokens.verify(refreshed.access_token));

    const body = assertOAuthError(await exchange(t, f, code), 400, 'invalid_grant');
    assert.equal(body.hint, 'Authorization code has been revoked');
    assert.equal(await t.app.ctx.tokens.verify(first.access_token), null);
    assert.equal(await t.app.ctx.tokens.verify(refreshed.access_token), null);
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: refreshed.refresh_token }), 400, 'invalid_grant');
  });

  test('bound to the client and the redirect_uri; expires after 10 minutes', async () => {
    const f = await fixture(t);
    const other = await makeApp(t, f.user.id);
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT, scope: 'oauth-user-show' })).get('code')!;
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(other.app.client_id), client_secret: other.clientSecret, redirect_uri: REDIRECT, code }), 400, 'invalid_grant');
    assertOAuthError(await exchange(t, f, code, { redirect_uri: 'https://client.example.test/other' }), 400, 'invalid_grant');
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(f.clientId), client_secret: f.clientSecret, code }), 400, 'invalid_request');
    assertOAuthError(await exchange(t, f, 'not-a-code'), 400, 'invalid_grant');
    // Still good after those failures:
    assert.equal((await exchange(t, f, code)).statusCode, 200);

    const late = redirectParams(await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT, scope: 'oauth-user-show' }))).get('code')!;
    const { sha256Hex } = await import('../../src/security/crypto.js');
    await t.database.db.updateTable('oauth_codes').set({ expires_at: Date.now() - 1 }).where('code_hash', '=', sha256Hex(late)).execute();
    const expired = assertOAuthError(await exchange(t, f, late), 400, 'invalid_grant');
    assert.equal(expired.hint, 'Authorization code has expired');
  });

  test('a code stored with a 10 minute lifetime', async () => {
    const f = await fixture(t);
    const before = Date.now();
    const code = redirectParams(await consent(f.browser, { response_type: 'code', client_id: String(f.clientId), scope: 'oauth-user-show' })).get('code')!;
    const { sha256Hex } = await import('../../src/security/crypto.js');
    const row = await t.database.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', sha256Hex(code)).executeTakeFirstOrThrow();
    assert.ok(row.expires_at - before >= 600_000 - 50 && row.expires_at - Date.now() <= 600_000);
    assert.equal(row.client_id, f.clientId);
    assert.equal(row.redirect_uri, REDIRECT);
  });
});
