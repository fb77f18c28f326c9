import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { cookieNames } from '../../src/web/session.js';
import { buildTestApp, makeApp, makeUser, type TestApp } from '../helper.js';
import { authorizeUrl, sessionFor } from '../oauth/helpers.js';

const ORIGIN = 'https://app.example.test';

/**
 * Each surface (API, OAuth server, pages, widgets) is a plugin with its own hooks: these check the
 * seams between them — who reads cookies, who answers CORS, which error shape, which CSP.
 */
describe('one plugin per surface', () => {
  let t: TestApp;
  let user: UserRow;
  let clientId: number;
  let sessionCookie: string;
  before(async () => {
    t = await buildTestApp();
    user = await makeUser(t.database.db);
    clientId = (await makeApp(t, user.id)).app.client_id;
    sessionCookie = `${cookieNames(t.config).session}=${await startSession(t.database.db, user.id)}`;
  });
  after(() => t.close());

  test('the consent page keeps the full Content-Security-Policy, with frame-ancestors none', async () => {
    const browser = await sessionFor(t, user.id);
    const res = await browser.get(authorizeUrl({ response_type: 'code', client_id: String(clientId), scope: 'oauth-user-show' }));
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /action="\/oauth\/authorize"/);
    const csp = String(res.headers['content-security-policy']);
    for (const directive of ["default-src 'self'", "script-src 'self'", "script-src-attr 'none'", "style-src 'self'", "object-src 'none'", "base-uri 'self'", "frame-ancestors 'none'"]) {
      assert.ok(csp.split(';').map((d) => d.trim()).includes(directive), `${directive} in ${csp}`);
    }
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('only /docs allows inline styles; pages, the document and the API keep the base policy', async () => {
    const docs = await t.app.inject({ url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.match(String(docs.headers['content-security-policy']), /style-src 'self' 'unsafe-inline'/);
    assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
    for (const url of ['/login', '/openapi.json', '/api/v1/user/oauth', '/healthz']) {
      const res = await t.app.inject({ url });
      assert.match(String(res.headers['content-security-policy']), /style-src 'self';/, url);
      assert.doesNotMatch(String(res.headers['content-security-policy']), /unsafe-inline/, url);
    }
  });

  test('the API never reads or sets cookies: a session is not a credential there', async () => {
    for (const [method, url] of [['GET', '/api/v1/user/oauth'], ['POST', '/api/v1/custom_alert'], ['GET', '/api/v1/nothing-here']] as const) {
      const res = await t.app.inject({ method, url, headers: { cookie: sessionCookie, accept: 'text/html' } });
      assert.ok(res.statusCode === 401 || res.statusCode === 404, `${method} ${url}: ${res.statusCode}`);
      assert.equal(res.headers['content-type'], 'application/json', `${method} ${url}: JSON whatever the client accepts`);
      assert.equal(res.headers['set-cookie'], undefined, `${method} ${url}`);
    }
  });

  test('widgets use their token only: no cookies; their scripts get JSON errors, OBS gets a page', async () => {
    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, user.id);
    const page = await t.app.inject({ url: `/widget/alerts?token=${token}`, headers: { cookie: sessionCookie, accept: 'text/html' } });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['set-cookie'], undefined);
    const bad = await t.app.inject({ method: 'POST', url: `/widget/api/shown?token=${token}`, headers: { 'content-type': 'application/json' }, payload: '{"type":' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers['content-type'], 'application/json');
    assert.equal(typeof bad.json().message, 'string');
    const badPage = await t.app.inject({ method: 'POST', url: `/widget/api/shown?token=${token}`, headers: { 'content-type': 'application/json', accept: 'text/html' }, payload: '{"type":' });
    assert.equal(badPage.statusCode, 400);
    assert.match(String(badPage.headers['content-type']), /^text\/html/);
    const noToken = await t.app.inject({ url: '/widget/api/token', headers: { cookie: sessionCookie } });
    assert.equal(noToken.statusCode, 401, 'a session does not stand in for the widget token');
  });

  test('pages answer errors as HTML pages, and JSON only when a script asks for it', async () => {
    const plain = await t.app.inject({ method: 'POST', url: '/logout', headers: { cookie: sessionCookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    assert.equal(plain.statusCode, 403);
    assert.match(String(plain.headers['content-type']), /^text\/html/);
    assert.match(plain.body, /Error 403/);
    const script = await t.app.inject({ method: 'POST', url: '/dashboard/realtime-token', headers: { cookie: sessionCookie, accept: 'application/json', 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(script.statusCode, 403);
    assert.equal(script.headers['content-type'], 'application/json');
    const consent = await t.app.inject({ method: 'POST', url: '/oauth/authorize', headers: { cookie: sessionCookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'decision=allow' });
    assert.equal(consent.statusCode, 403);
    assert.match(String(consent.headers['content-type']), /^text\/html/);
  });

  test('CORS answers preflights for the API, token, revocation and metadata endpoints only', async () => {
    const preflight = (url: string) =>
      t.app.inject({ method: 'OPTIONS', url, headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } });
    for (const url of ['/api/v1/user/oauth', '/oauth/token', '/oauth/revoke', '/.well-known/oauth-authorization-server']) {
      const res = await preflight(url);
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.headers['access-control-allow-origin'], ORIGIN, url);
    }
    for (const url of ['/oauth/authorize', '/login', '/dashboard', '/widget/api/token', '/docs', '/openapi.json', '/healthz', '/static/app.css']) {
      const res = await preflight(url);
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.headers['access-control-allow-origin'], undefined, url);
    }
    const metadata = await t.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { origin: ORIGIN } });
    assert.equal(metadata.statusCode, 200);
    assert.equal(metadata.headers['access-control-allow-origin'], ORIGIN);
    const consentPage = await t.app.inject({ url: authorizeUrl({ response_type: 'code', client_id: String(clientId) }), headers: { origin: ORIGIN, cookie: sessionCookie } });
    assert.equal(consentPage.headers['access-control-allow-origin'], undefined);
  });

  test('static files and avatars need no session and set no cookie', async () => {
    for (const url of ['/static/app.css', `/avatars/${user.id}.svg`, '/static/vendor/centrifuge.js']) {
      const res = await t.app.inject({ url, headers: { cookie: sessionCookie } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['set-cookie'], undefined, url);
    }
  });
});
