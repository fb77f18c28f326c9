import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, makeApp, makeUser, type TestApp } from '../helper.js';
import { REDIRECT, assertOAuthError, basic, exchange, fixture, obtainCode, tokenRequest, type Fixture } from './helpers.js';

let t: TestApp;
let f: Fixture;
before(async () => {
  t = await buildTestApp();
  f = await fixture(t);
});
after(() => t.close());

const json = (payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(payload) });

function codeFor(fx: Fixture = f, scope = 'oauth-user-show oauth-donation-index'): Promise<string> {
  return obtainCode(fx, { scope });
}

async function tokensFor(fx: Fixture = f, scope?: string) {
  const res = await exchange(t, fx, await codeFor(fx, scope));
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { access_token: string; refresh_token: string; expires_in: number };
}

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: refreshToken, ...extra });

describe('client authentication', () => {
  test('HTTP Basic works; a wrong secret is 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const ok = await tokenRequest(t.app, { grant_type: 'client_credentials' }, { authorization: basic(f.clientId, f.clientSecret) });
    assert.equal(ok.statusCode, 200, ok.body);
    const bad = await tokenRequest(t.app, { grant_type: 'client_credentials' }, { authorization: basic(f.clientId, 'wrong') });
    assertOAuthError(bad, 401, 'invalid_client');
    assert.equal(bad.headers['www-authenticate'], 'Basic realm="OAuth"');
    const malformed = await tokenRequest(t.app, { grant_type: 'client_credentials' }, { authorization: 'Basic !!!' });
    assertOAuthError(malformed, 401, 'invalid_client');
    const noColon = await tokenRequest(t.app, { grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from('abc').toString('base64')}` });
    assertOAuthError(noColon, 401, 'invalid_client');
  });

  test('body credentials; wrong or missing secret, unknown or malformed client_id', async () => {
    const cc = (extra: Record<string, string>) => tokenRequest(t.app, { grant_type: 'client_credentials', ...extra });
    assert.equal((await cc({ client_id: String(f.clientId), client_secret: f.clientSecret })).statusCode, 200);
    const wrong = await cc({ client_id: String(f.clientId), client_secret: `${f.clientSecret}x` });
    assertOAuthError(wrong, 401, 'invalid_client');
    assert.equal(wrong.headers['www-authenticate'], undefined);
    assertOAuthError(await cc({ client_id: String(f.clientId) }), 401, 'invalid_client');
    assertOAuthError(await cc({ client_id: '987654', client_secret: f.clientSecret }), 401, 'invalid_client');
    assertOAuthError(await cc({ client_id: 'abc', client_secret: f.clientSecret }), 401, 'invalid_client');
    assertOAuthError(await cc({ client_id: '-1', client_secret: f.clientSecret }), 401, 'invalid_client');
    assertOAuthError(await cc({ client_secret: f.clientSecret }), 400, 'invalid_request');
  });

  test('Basic and body together must agree', async () => {
    const auth = { authorization: basic(f.clientId, f.clientSecret) };
    assert.equal((await tokenRequest(t.app, { grant_type: 'client_credentials', client_id: String(f.clientId) }, auth)).statusCode, 200);
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials', client_id: String(f.clientId + 1000) }, auth), 400, 'invalid_request');
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials', client_secret: 'other' }, auth), 400, 'invalid_request');
  });
});

describe('body encodings (compatibility.md §1)', () => {
  const scopesOf = async (res: Awaited<ReturnType<typeof json>>) => {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json');
    return [...(await t.app.ctx.tokens.verify(res.json().access_token))!.scopes];
  };

  test('JSON with client_id as a number and as a string', async () => {
    assert.deepEqual(await scopesOf(await json({ grant_type: 'client_credentials', client_id: f.clientId, client_secret: f.clientSecret, scope: 'oauth-user-show oauth-poll-subscribe' })), ['oauth-user-show', 'oauth-poll-subscribe']);
    assert.deepEqual(await scopesOf(await json({ grant_type: 'client_credentials', client_id: String(f.clientId), client_secret: f.clientSecret, scope: ['oauth-user-show'] })), ['oauth-user-show']);
  });

  test('form with brackets, repeated keys, + and %20', async () => {
    const raw = (body: string) => t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    const base = `grant_type=client_credentials&client_id=${f.clientId}&client_secret=${f.clientSecret}`;
    const want = ['oauth-user-show', 'oauth-goal-subscribe'];
    assert.deepEqual(await scopesOf(await raw(`${base}&scope[0]=oauth-user-show&scope[1]=oauth-goal-subscribe`)), want);
    assert.deepEqual(await scopesOf(await raw(`${base}&scope%5B%5D=oauth-user-show&scope%5B%5D=oauth-goal-subscribe`)), want);
    assert.deepEqual(await scopesOf(await raw(`${base}&scope=oauth-user-show&scope=oauth-goal-subscribe`)), want);
    assert.deepEqual(await scopesOf(await raw(`${base}&scope=oauth-user-show+oauth-goal-subscribe`)), want);
    assert.deepEqual(await scopesOf(await raw(`${base}&scope=oauth-user-show%20oauth-goal-subscribe`)), want);
    assert.deepEqual(await scopesOf(await raw(`${base}&scope=oauth-user-show%2Boauth-goal-subscribe`)), want);
  });

  test('multipart/form-data', async () => {
    const boundary = '----openalerts-test';
    const fields = { grant_type: 'client_credentials', client_id: String(f.clientId), client_secret: f.clientSecret, 'scope[]': 'oauth-user-show' };
    const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
    const extra = `--${boundary}\r\nContent-Disposition: form-data; name="scope[]"\r\n\r\noauth-donation-index\r\n`;
    const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: `${parts.join('')}${extra}--${boundary}--\r\n` });
    assert.deepEqual(await scopesOf(res), ['oauth-user-show', 'oauth-donation-index']);
  });

  test('unparsable, non-object and oversized bodies get the OAuth error shape', async () => {
    const bad = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":' });
    assertOAuthError(bad, 400, 'invalid_request');
    assertOAuthError(await json(['grant_type', 'client_credentials']), 400, 'invalid_request');
    assertOAuthError(await json('client_credentials'), 400, 'invalid_request');
    assertOAuthError(await json(null), 400, 'invalid_request');
    const huge = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=client_credentials&x=${'a'.repeat(2 * 1024 * 1024)}` });
    assertOAuthError(huge, 413, 'invalid_request');
    const empty = await t.app.inject({ method: 'POST', url: '/oauth/token' });
    assertOAuthError(empty, 400, 'invalid_request');
  });
});

describe('bad input of every parameter', () => {
  test('grant_type: missing, empty, unknown, too long, wrong type', async () => {
    const auth = { client_id: f.clientId, client_secret: f.clientSecret };
    assertOAuthError(await json({ ...auth }), 400, 'invalid_request');
    assertOAuthError(await json({ ...auth, grant_type: '' }), 400, 'invalid_request');
    assertOAuthError(await json({ ...auth, grant_type: 'password' }), 400, 'unsupported_grant_type');
    assertOAuthError(await json({ ...auth, grant_type: 'implicit' }), 400, 'unsupported_grant_type');
    assertOAuthError(await json({ ...auth, grant_type: 'x'.repeat(5000) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...auth, grant_type: ['client_credentials'] }), 400, 'invalid_request');
    assertOAuthError(await json({ ...auth, grant_type: { a: 1 } }), 400, 'invalid_request');
    assertOAuthError(await json({ ...auth, grant_type: true }), 400, 'invalid_request');
    const repeated = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=client_credentials&grant_type=refresh_token&client_id=${f.clientId}&client_secret=${f.clientSecret}` });
    assertOAuthError(repeated, 400, 'invalid_request');
  });

  test('client_id and client_secret: empty, too long, wrong type', async () => {
    const base = { grant_type: 'client_credentials' };
    assertOAuthError(await json({ ...base, client_id: '', client_secret: f.clientSecret }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, client_id: '9'.repeat(50), client_secret: f.clientSecret }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, client_id: [f.clientId], client_secret: f.clientSecret }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, client_id: 1.5, client_secret: f.clientSecret }), 401, 'invalid_client');
    assertOAuthError(await json({ ...base, client_id: f.clientId, client_secret: '' }), 401, 'invalid_client');
    assertOAuthError(await json({ ...base, client_id: f.clientId, client_secret: 's'.repeat(600) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, client_id: f.clientId, client_secret: { x: 1 } }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, client_id: f.clientId, client_secret: 12345 }), 401, 'invalid_client');
  });

  test('code, redirect_uri, code_verifier: missing, empty, too long, wrong type', async () => {
    const base = { grant_type: 'authorization_code', client_id: f.clientId, client_secret: f.clientSecret, redirect_uri: REDIRECT };
    assertOAuthError(await json(base), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code: '' }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code: 'c'.repeat(1000) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code: ['a', 'b'] }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code: 123 }), 400, 'invalid_grant');
    const code = await codeFor();
    assertOAuthError(await json({ ...base, code, redirect_uri: 'r'.repeat(3000) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code, redirect_uri: [REDIRECT] }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code, redirect_uri: '' }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code, code_verifier: 'v'.repeat(200) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, code, code_verifier: { a: 'b' } }), 400, 'invalid_request');
    assert.equal((await json({ ...base, code })).statusCode, 200);
  });

  test('refresh_token and scope: missing, empty, too long, wrong type, unknown', async () => {
    const base = { grant_type: 'refresh_token', client_id: f.clientId, client_secret: f.clientSecret };
    assertOAuthError(await json(base), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token: '' }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token: 'r'.repeat(600) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token: ['x'] }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token: 'unknown' }), 400, 'invalid_grant');
    const { refresh_token } = await tokensFor();
    assertOAuthError(await json({ ...base, refresh_token, scope: 'oauth-user-show oauth-nonsense' }), 400, 'invalid_scope');
    assertOAuthError(await json({ ...base, refresh_token, scope: 'oauth-user-show '.repeat(100) }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token, scope: 42 }), 400, 'invalid_request');
    assertOAuthError(await json({ ...base, refresh_token, scope: [['oauth-user-show', true]] }), 400, 'invalid_request');
    // None of those used the token up:
    assert.equal((await json({ ...base, refresh_token })).statusCode, 200);
    assertOAuthError(await json({ grant_type: 'client_credentials', client_id: f.clientId, client_secret: f.clientSecret, scope: 'admin' }), 400, 'invalid_scope');
  });
});

describe('refresh_token grant', () => {
  test('rotates on every use; reusing an old one revokes the whole grant', async () => {
    const first = await tokensFor();
    const r1 = await refresh(first.refresh_token);
    assert.equal(r1.statusCode, 200, r1.body);
    const second = r1.json();
    assert.deepEqual(Object.keys(second), ['token_type', 'expires_in', 'access_token', 'refresh_token']);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    const third = (await refresh(second.refresh_token)).json();
    assert.ok(await t.app.ctx.tokens.verify(third.access_token));
    assert.ok(await t.app.ctx.tokens.verify(first.access_token)); // earlier access tokens live on until reuse

    const reuse = assertOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
    assert.equal(reuse.hint, 'Token has been revoked');
    for (const token of [first.access_token, second.access_token, third.access_token]) assert.equal(await t.app.ctx.tokens.verify(token), null);
    assertOAuthError(await refresh(third.refresh_token), 400, 'invalid_grant');
  });

  test('two concurrent uses of one refresh token: exactly one wins, and the replay revokes the grant', async () => {
    const first = await tokensFor();
    const results = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    const ok = results.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 1, `${ok.length} refreshes succeeded`);
    for (const r of ok) assert.equal(await t.app.ctx.tokens.verify(r.json().access_token), null);
  });

  test('scope may narrow, never widen; absent keeps the original', async () => {
    const first = await tokensFor(f, 'oauth-user-show oauth-donation-index');
    const narrowed = (await refresh(first.refresh_token, { scope: 'oauth-user-show' })).json();
    assert.deepEqual([...(await t.app.ctx.tokens.verify(narrowed.access_token))!.scopes], ['oauth-user-show']);
    assertOAuthError(await refresh(narrowed.refresh_token, { scope: 'oauth-user-show oauth-custom_alert-store' }), 400, 'invalid_scope');
    // The failed widening did not use the token; absent scope → the originally granted scopes.
    const kept = (await refresh(narrowed.refresh_token)).json();
    assert.deepEqual([...(await t.app.ctx.tokens.verify(kept.access_token))!.scopes], ['oauth-user-show', 'oauth-donation-index']);
  });

  test("another client cannot use it, and its failure does not burn it", async () => {
    const first = await tokensFor();
    const other = await makeApp(t, f.user.id);
    const res = await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(other.app.client_id), client_secret: other.clientSecret, refresh_token: first.refresh_token });
    assertOAuthError(res, 400, 'invalid_grant');
    assert.equal((await refresh(first.refresh_token)).statusCode, 200);
  });

  test('an expired refresh token is invalid_grant; a deactivated user gets no new tokens', async () => {
    const { sha256Hex } = await import('../../src/security/crypto.js');
    const first = await tokensFor();
    await t.database.db.updateTable('oauth_refresh_tokens').set({ expires_at: Date.now() - 1 }).where('token_hash', '=', sha256Hex(first.refresh_token)).execute();
    assert.equal(assertOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant').hint, 'Token has expired');

    const owner = await makeUser(t.database.db);
    const fx = await fixture(t);
    const tokens = await tokensFor(fx);
    await t.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', fx.user.id).execute();
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(fx.clientId), client_secret: fx.clientSecret, refresh_token: tokens.refresh_token }), 400, 'invalid_grant');
    assert.ok(owner);
  });
});

describe('client_credentials grant', () => {
  test('a token with no user and no refresh token; scopes may be empty', async () => {
    const res = await json({ grant_type: 'client_credentials', client_id: f.clientId, client_secret: f.clientSecret });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['token_type', 'expires_in', 'access_token']);
    const info = (await t.app.ctx.tokens.verify(body.access_token))!;
    assert.equal(info.userId, null);
    assert.equal(info.clientId, f.clientId);
    assert.deepEqual([...info.scopes], []);
  });
});

describe('POST /oauth/revoke (RFC 7009)', () => {
  const revoke = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/oauth/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(form).toString() });
  const auth = () => ({ client_id: String(f.clientId), client_secret: f.clientSecret });

  test('an access token stops working at once (it was cached); the refresh token stays', async () => {
    const tokens = await tokensFor();
    assert.ok(await t.app.ctx.tokens.verify(tokens.access_token));
    const res = await revoke({ ...auth(), token: tokens.access_token, token_type_hint: 'access_token' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(await t.app.ctx.tokens.verify(tokens.access_token), null);
    assert.equal((await refresh(tokens.refresh_token)).statusCode, 200);
  });

  test('a refresh token revokes its whole grant, whatever the hint', async () => {
    const tokens = await tokensFor();
    assert.ok(await t.app.ctx.tokens.verify(tokens.access_token));
    const res = await revoke({ token: tokens.refresh_token, token_type_hint: 'access_token' }, { authorization: basic(f.clientId, f.clientSecret) });
    assert.equal(res.statusCode, 200);
    assert.equal(await t.app.ctx.tokens.verify(tokens.access_token), null);
    assertOAuthError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
  });

  test('unknown tokens and other clients’ tokens: 200, and nothing is revoked', async () => {
    assert.equal((await revoke({ ...auth(), token: 'no-such-token' })).statusCode, 200);
    assert.equal((await revoke({ ...auth(), token: 'no-such-token', token_type_hint: 'weird_hint' })).statusCode, 200);
    const other = await makeApp(t, f.user.id);
    const tokens = await tokensFor();
    const res = await revoke({ client_id: String(other.app.client_id), client_secret: other.clientSecret, token: tokens.access_token });
    assert.equal(res.statusCode, 200);
    assert.ok(await t.app.ctx.tokens.verify(tokens.access_token));
  });

  test('client authentication and the token parameter are required', async () => {
    assertOAuthError(await revoke({ token: 'x' }), 400, 'invalid_request');
    assertOAuthError(await revoke({ client_id: String(f.clientId), client_secret: 'wrong', token: 'x' }), 401, 'invalid_client');
    assertOAuthError(await revoke(auth()), 400, 'invalid_request');
    assertOAuthError(await revoke({ ...auth(), token: '' }), 400, 'invalid_request');
    assertOAuthError(await revoke({ ...auth(), token: 't'.repeat(600) }), 400, 'invalid_request');
    const arr = await t.app.inject({ method: 'POST', url: '/oauth/revoke', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ ...auth(), token: ['a', 'b'] }) });
    assertOAuthError(arr, 400, 'invalid_request');
  });
});

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  test('absolute endpoints from PUBLIC_URL and what we support', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const meta = res.json();
    const base = t.config.publicUrl;
    assert.equal(meta.issuer, base);
    assert.equal(meta.authorization_endpoint, `${base}/oauth/authorize`);
    assert.equal(meta.token_endpoint, `${base}/oauth/token`);
    assert.equal(meta.revocation_endpoint, `${base}/oauth/revoke`);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(meta.response_types_supported, ['code', 'token']);
    assert.equal(meta.scopes_supported.length, 6);
    for (const g of ['authorization_code', 'implicit', 'refresh_token', 'client_credentials']) assert.ok(meta.grant_types_supported.includes(g));
  });
});
