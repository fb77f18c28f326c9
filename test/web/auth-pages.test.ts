import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

async function signUp(browser: BrowserSession, fields: Record<string, string>) {
  await browser.get('/signup');
  return browser.postForm('/signup', { currency: 'USD', language: 'en_US', ...fields });
}

test('sign-up logs the new streamer in; the first account is the administrator', async () => {
  const browser = new BrowserSession(t.app);
  const res = await signUp(browser, { email: 'alice@example.test', name: 'Alice', password: 'a long passphrase' });
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/dashboard');
  const dashboard = await browser.get('/dashboard');
  assert.equal(dashboard.statusCode, 200);
  assert.match(dashboard.body, /Hello, Alice/);
  assert.match(dashboard.body, /<dd>admin<\/dd>/);
  const session = (await t.database.db.selectFrom('sessions').selectAll().execute())[0]!;
  assert.notEqual(session.id_hash, browser.cookies.get('oa_session'));
});

test('a taken e-mail and a weak password show form errors and write nothing', async () => {
  const browser = new BrowserSession(t.app);
  const users = async () => (await t.database.db.selectFrom('users').select('id').execute()).length;
  const count = await users();
  const taken = await signUp(browser, { email: 'ALICE@example.test', name: 'Alice Two', password: 'a long passphrase' });
  assert.equal(taken.statusCode, 422);
  assert.match(taken.body, /The email has already been taken/);
  assert.match(taken.body, /value="Alice Two"/, 'the form keeps what was typed');
  const weak = await signUp(browser, { email: 'bob@example.test', name: 'Bob', password: '12345678' });
  assert.equal(weak.statusCode, 422);
  assert.match(weak.body, /too easy to guess/);
  assert.equal(await users(), count);
});

test('a form post without a valid CSRF token is refused', async () => {
  const browser = new BrowserSession(t.app);
  await browser.get('/signup');
  const res = await browser.postForm('/signup', { email: 'eve@example.test', name: 'Eve', password: 'a long passphrase', _csrf: 'forged' });
  assert.equal(res.statusCode, 403);
  const fresh = new BrowserSession(t.app);
  const noToken = await fresh.postForm('/login', { email: 'alice@example.test', password: 'a long passphrase' }, false);
  assert.equal(noToken.statusCode, 403);
});

test('log-in, the next parameter (same-site only), and log-out', async () => {
  const browser = new BrowserSession(t.app);
  const gate = await browser.get('/dashboard/apps');
  assert.equal(gate.statusCode, 302);
  assert.equal(gate.headers.location, '/login?next=%2Fdashboard%2Fapps');
  await browser.get('/login?next=%2Fdashboard%2Fapps');
  const wrong = await browser.postForm('/login', { email: 'alice@example.test', password: 'not the password', next: '/dashboard/apps' });
  assert.equal(wrong.statusCode, 401);
  assert.match(wrong.body, /These credentials do not match/);
  const ok = await browser.postForm('/login', { email: 'alice@example.test', password: 'a long passphrase', next: '/dashboard/apps' });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/dashboard/apps');
  const evil = new BrowserSession(t.app);
  await evil.get('/login');
  const offsite = await evil.postForm('/login', { email: 'alice@example.test', password: 'a long passphrase', next: '//evil.example/' });
  assert.equal(offsite.headers.location, '/dashboard');

  await browser.get('/dashboard');
  const out = await browser.postForm('/logout', {});
  assert.equal(out.statusCode, 303);
  assert.equal((await browser.get('/dashboard')).statusCode, 302);
});

test('applications page: create (secret shown once), rotate, delete; names are escaped', async () => {
  const browser = new BrowserSession(t.app);
  await browser.get('/login');
  await browser.postForm('/login', { email: 'alice@example.test', password: 'a long passphrase' });
  await browser.get('/dashboard/apps');
  const posted = await browser.postForm('/dashboard/apps', { name: '<b>My bot</b>', redirect_uris: 'https://bot.example/cb\nhttp://localhost:9000/cb' });
  assert.equal(posted.statusCode, 303);
  const created = await browser.follow(posted);
  assert.match(created.body, /&lt;b&gt;My bot&lt;\/b&gt;/);
  assert.equal(created.body.includes('<b>My bot</b>'), false);
  const secret = /id="client-secret">([^<]+)</.exec(created.body)![1]!;
  const app = (await t.database.db.selectFrom('apps').selectAll().execute())[0]!;
  assert.equal(app.secret_sealed.includes(secret), false);
  const again = await browser.get('/dashboard/apps');
  assert.equal(again.body.includes(secret), false, 'the secret is shown only once');

  const bad = await browser.postForm('/dashboard/apps', { name: 'x', redirect_uris: 'not a url' });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /is not an absolute URL/);

  const rotated = await browser.follow(await browser.postForm(`/dashboard/apps/${app.id}/rotate`, {}));
  const newSecret = /id="client-secret">([^<]+)</.exec(rotated.body)![1]!;
  assert.notEqual(newSecret, secret);

  const other = new BrowserSession(t.app);
  await other.get('/signup');
  await other.postForm('/signup', { email: 'mallory@example.test', name: 'Mallory', password: 'a long passphrase' });
  await other.get('/dashboard/apps');
  const stolen = await other.postForm(`/dashboard/apps/${app.id}/delete`, {});
  assert.equal(stolen.statusCode, 404, "another streamer cannot delete someone else's app");

  await browser.get('/dashboard/apps');
  const deleted = await browser.postForm(`/dashboard/apps/${app.id}/delete`, {});
  assert.equal(deleted.statusCode, 303);
  assert.equal((await t.database.db.selectFrom('apps').selectAll().execute()).length, 0);
});

test('health endpoints and JSON errors', async () => {
  assert.deepEqual((await t.app.inject('/healthz')).json(), { status: 'ok' });
  const ready = await t.app.inject('/readyz');
  assert.equal(ready.statusCode, 200);
  assert.equal(ready.headers['content-type'], 'application/json');
  const missing = await t.app.inject('/api/v1/nothing-here');
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['content-type'], 'application/json');
  assert.match(missing.json().message, /No route/);
  const page = await t.app.inject({ url: '/nothing-here', headers: { accept: 'text/html' } });
  assert.equal(page.statusCode, 404);
  assert.match(page.headers['content-type'] as string, /text\/html/);
});
