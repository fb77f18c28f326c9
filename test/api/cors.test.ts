import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFixture, json, type ApiFixture } from './helpers.js';

const ORIGIN = 'https://widget-maker.example.test';

describe('CORS on the API and token endpoints (compatibility.md §1)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture();
  });
  after(() => f.close());

  const preflight = (url: string, requestHeaders = 'authorization, content-type, x-requested-with') =>
    f.t.app.inject({ method: 'OPTIONS', url, headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders } });

  for (const url of ['/api/v1/custom_alert', '/api/v1/user/oauth', '/api/v1/centrifuge/subscribe', '/oauth/token', '/oauth/revoke']) {
    test(`preflight ${url}: exact origin, credentials, the headers clients send`, async () => {
      const res = await preflight(url);
      assert.equal(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
      assert.equal(res.headers['access-control-allow-credentials'], 'true');
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
      for (const h of ['authorization', 'content-type', 'x-requested-with']) assert.ok(allowed.includes(h), `${h} allowed`);
      assert.match(String(res.headers['access-control-allow-methods']), /POST/);
      assert.match(String(res.headers.vary), /Origin/);
    });
  }

  test('a credentialed cross-origin API call gets the exact Origin back and may read the limit headers', async () => {
    const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: { ...f.auth(), origin: ORIGIN, cookie: 'session=whatever', 'x-requested-with': 'XMLHttpRequest' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.match(String(res.headers['access-control-expose-headers']), /X-RateLimit-Remaining/);
    assert.ok(json(res).data);
  });

  test('error responses carry CORS headers too, so browser apps can read a 401', async () => {
    const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: { origin: ORIGIN } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(res.headers['access-control-expose-headers']), /WWW-Authenticate/);
  });

  test('the token endpoint answers cross-origin calls, errors included', async () => {
    const res = await f.t.app.inject({ method: 'POST', url: '/oauth/token', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=refresh_token&refresh_token=nope&client_id=1' });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode}`);
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
  });

  test('any origin is echoed, never `*`', async () => {
    for (const origin of ['http://localhost:5173', 'https://a.b.example', 'null']) {
      const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: { ...f.auth(), origin } });
      assert.equal(res.headers['access-control-allow-origin'], origin);
    }
  });

  test('pages get no CORS: no allow-origin header, and their preflight is a 404', async () => {
    const page = await f.t.app.inject({ url: '/login', headers: { origin: ORIGIN, accept: 'text/html' } });
    assert.equal(page.headers['access-control-allow-origin'], undefined);
    const res = await preflight('/login');
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});
