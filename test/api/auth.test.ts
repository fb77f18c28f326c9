import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFixture, json, type ApiFixture } from './helpers.js';

const ROUTES = [
  { method: 'GET' as const, url: '/api/v1/user/oauth', scope: 'oauth-user-show' },
  { method: 'GET' as const, url: '/api/v1/alerts/donations', scope: 'oauth-donation-index' },
  { method: 'POST' as const, url: '/api/v1/custom_alert', scope: 'oauth-custom_alert-store' },
];

describe('API authentication and scopes (compatibility.md §1, RFC 6750)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture();
  });
  after(() => f.close());

  for (const route of ROUTES) {
    test(`${route.method} ${route.url}: 401 with WWW-Authenticate for a missing, malformed, unknown or revoked token`, async () => {
      const revoked = await f.tokenWith([route.scope]);
      await f.t.app.ctx.tokens.revokeAccessToken(f.t.database.db, revoked);
      const cases: Array<[string, Record<string, string>, RegExp]> = [
        ['missing', {}, /^Bearer realm="api"$/],
        ['wrong scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, /^Bearer realm="api"$/],
        ['empty bearer', { authorization: 'Bearer ' }, /^Bearer realm="api"$/],
        ['unknown token', { authorization: 'Bearer not-a-real-token' }, /error="invalid_token"/],
        ['revoked token', { authorization: `Bearer ${revoked}` }, /error="invalid_token"/],
        ['oversized token', { authorization: `Bearer ${'x'.repeat(4000)}` }, /error="invalid_token"/],
      ];
      for (const [name, headers, challenge] of cases) {
        const res = await f.t.app.inject({ method: route.method, url: route.url, headers });
        assert.equal(res.statusCode, 401, name);
        assert.deepEqual(json(res), { message: 'Unauthenticated.' }, name);
        assert.match(String(res.headers['www-authenticate']), challenge, name);
      }
    });

    test(`${route.method} ${route.url}: 403 insufficient_scope naming ${route.scope}`, async () => {
      const others = ['oauth-user-show', 'oauth-donation-index', 'oauth-custom_alert-store', 'oauth-donation-subscribe'].filter((s) => s !== route.scope);
      const token = await f.tokenWith(others);
      const res = await f.t.app.inject({ method: route.method, url: route.url, headers: f.auth(token) });
      assert.equal(res.statusCode, 403);
      assert.equal(typeof json(res).message, 'string');
      assert.equal(res.headers['www-authenticate'], `Bearer realm="api", error="insufficient_scope", scope="${route.scope}"`);
    });

    test(`${route.method} ${route.url}: a client-credentials token (no user) is refused with 403`, async () => {
      const token = await f.tokenWith([route.scope], { userId: null });
      const res = await f.t.app.inject({ method: route.method, url: route.url, headers: f.auth(token) });
      assert.equal(res.statusCode, 403);
      assert.match(String(res.headers['www-authenticate']), /insufficient_scope/);
    });
  }

  test('authentication comes before body validation: a bad body without a token is a 401', async () => {
    const res = await f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', payload: { header: 'x'.repeat(1000) } });
    assert.equal(res.statusCode, 401);
  });

  test('the bearer scheme is case-insensitive (RFC 6750 §2.1)', async () => {
    const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: { authorization: `bearer ${f.token}` } });
    assert.equal(res.statusCode, 200);
  });

  test('unknown API paths answer a JSON 404', async () => {
    const res = await f.t.app.inject({ url: '/api/v1/no/such/thing', headers: f.auth() });
    assert.equal(res.statusCode, 404);
    assert.equal(typeof json(res).message, 'string');
  });
});
