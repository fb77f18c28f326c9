import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { TokenVerifier } from '../../src/security/jwt.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';
import { assertHtml, followAccepted, assertNoInlineScript, pageData, streamer } from './helpers.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

let t: TestApp;
let admin: Awaited<ReturnType<typeof streamer>>;
before(async () => {
  t = await buildTestApp();
  admin = await streamer(t, { admin: true });
});
after(() => t.close());

const DASHBOARD_PAGES = ['/dashboard', '/dashboard/donations', '/dashboard/goals', '/dashboard/polls', '/dashboard/merchandise', '/dashboard/apps', '/dashboard/profile'];
const ADMIN_PAGES = ['/admin/users', '/admin/rates'];

test('every dashboard page needs a log-in, renders for a streamer, and has no inline script', async () => {
  const anonymous = new BrowserSession(t.app);
  for (const url of [...DASHBOARD_PAGES, ...ADMIN_PAGES]) {
    const res = await anonymous.get(url);
    assert.equal(res.statusCode, 302, url);
    assert.equal(res.headers.location, `/login?next=${encodeURIComponent(url)}`);
  }
  const { browser } = await streamer(t);
  for (const url of DASHBOARD_PAGES) {
    const res = await browser.get(url);
    assertHtml(res);
    assert.match(res.body, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(res.body, /<script src="\/static\/dashboard.js" defer><\/script>/);
    assert.match(res.body, new RegExp(`<a href="${url}" aria-current="page">`), `${url} is marked in the navigation`);
    assertNoInlineScript(res.body);
  }
  for (const url of ADMIN_PAGES) assertNoInlineScript((await admin.browser.get(url)).body);
});

test('the navigation links every section; admin links only for administrators', async () => {
  const { browser } = await streamer(t);
  const mine = (await browser.get('/dashboard')).body;
  for (const href of [...DASHBOARD_PAGES, '/dashboard/authorized-apps', '/dashboard/widgets']) assert.match(mine, new RegExp(`<a href="${href}"`), href);
  for (const href of ['/admin/users', '/admin/merchants', '/admin/rates']) assert.doesNotMatch(mine, new RegExp(`href="${href}"`));
  const theirs = (await admin.browser.get('/dashboard')).body;
  for (const href of ['/admin/users', '/admin/merchants', '/admin/rates']) assert.match(theirs, new RegExp(`<a href="${href}"`), href);
});

test('overview: balance, the latest donations (escaped, own only) and realtime tokens for the donation channel', async () => {
  const { user, browser } = await streamer(t);
  const other = await makeUser(t.database.db);
  await createDonation(t.database.db, { userId: user.id, username: '<img src=x onerror=alert(1)>', message: 'hi </script><script>alert(1)</script>', amount: '12.5', currency: 'USD' });
  await createDonation(t.database.db, { userId: other.id, username: 'SomeoneElse', message: 'not for you', amount: '3', currency: 'EUR' });
  const res = await browser.get('/dashboard');
  assertHtml(res);
  assert.match(res.body, new RegExp(`Hello, ${user.name}`));
  assert.match(res.body, /id="balance">\$0\.00</);
  assert.match(res.body, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.match(res.body, /\$12\.50/);
  assert.doesNotMatch(res.body, /<img src=x/);
  assert.doesNotMatch(res.body, /SomeoneElse|not for you/);
  assertNoInlineScript(res.body);

  const data = pageData(res);
  assert.equal(data.page, 'overview');
  assert.equal(data.realtime.tokenUrl, '/dashboard/realtime-token');
  const verifier = new TokenVerifier(t.app.ctx.secrets.realtimeTokenSecret);
  const conn = await verifier.verify(data.realtime.token);
  assert.equal(conn.sub, String(user.id));
  assert.ok(conn.exp! - Date.now() / 1000 <= 300 && conn.exp! - Date.now() / 1000 > 200, 'short-lived connection token');
  assert.deepEqual(data.realtime.channels.map((c: { channel: string }) => c.channel), [`$alerts:donation_${user.id}`, `$goals:goal_${user.id}`, `$polls:poll_${user.id}`]);
  const chan = await verifier.verify(data.realtime.channels[0].token);
  assert.equal(chan.channel, `$alerts:donation_${user.id}`);
  assert.equal(chan.sub, String(user.id));
  assert.match(res.body, /<script src="\/static\/vendor\/centrifuge.js" defer><\/script>\n<script src="\/static\/dashboard.js" defer>/, 'centrifuge loads before dashboard.js');
});

test('send test alert: a sandbox donation for the logged-in streamer, from the form and from fetch; CSRF required', async () => {
  const { user, browser } = await streamer(t);
  const count = async () => (await t.database.db.selectFrom('donations').select('id').where('user_id', '=', user.id).execute()).length;
  await browser.get('/dashboard');
  const form = await browser.postForm('/dashboard/test-alert', {});
  assert.equal(form.statusCode, 303);
  assert.match((await followAccepted(browser, form, '/dashboard')).body, /Test alert sent/);
  assert.doesNotMatch((await browser.get('/dashboard')).body, /Test alert sent/, 'shown once');
  assert.equal(await count(), 1);

  const csrf = pageData(await browser.get('/dashboard')).csrf as string;
  const json = await browser.request({ method: 'POST', url: '/dashboard/test-alert', headers: { accept: 'application/json', 'x-csrf-token': csrf } });
  assert.equal(json.statusCode, 201, json.body);
  const donation = json.json().data;
  assert.deepEqual(donation.payin_system, { title: 'Sandbox' });
  assert.equal(donation.recipient_name, user.name);
  assert.ok(donation.amount > 0);
  assert.equal(await count(), 2);
  const outbox = await eventsOnChannel(t.database.db, `$alerts:donation_${user.id}`);
  assert.ok(outbox.some((row) => row.payload.id === donation.id), 'published like any donation');

  const forged = await browser.postForm('/dashboard/test-alert', { _csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
  const noHeader = await browser.request({ method: 'POST', url: '/dashboard/test-alert', headers: { accept: 'application/json' } });
  assert.equal(noHeader.statusCode, 403);
  assert.equal(await count(), 2);
});

test('realtime-token endpoint: session + CSRF; connection token or a token for one of your own channels only', async () => {
  const { user, browser } = await streamer(t);
  const csrf = pageData(await browser.get('/dashboard')).csrf as string;
  const post = (payload: unknown, headers: Record<string, string> = { 'x-csrf-token': csrf }, b: BrowserSession = browser) =>
    b.request({ method: 'POST', url: '/dashboard/realtime-token', payload: payload as object, headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } });
  const verifier = new TokenVerifier(t.app.ctx.secrets.realtimeTokenSecret);

  const conn = await post({});
  assert.equal(conn.statusCode, 200);
  assert.equal(conn.headers['cache-control'], 'no-store');
  assert.equal((await verifier.verify(conn.json().token)).sub, String(user.id));
  for (const channel of [`$alerts:donation_${user.id}`, `$goals:goal_${user.id}`, `$polls:poll_${user.id}`]) {
    const res = await post({ channel });
    assert.equal(res.statusCode, 200, channel);
    const claims = await verifier.verify(res.json().token);
    assert.equal(claims.channel, channel);
    assert.equal(claims.sub, String(user.id));
  }
  const foreign = await post({ channel: `$alerts:donation_${admin.user.id}` });
  assert.equal(foreign.statusCode, 403);
  assert.deepEqual(foreign.json(), { message: 'This channel is not yours.' });
  assert.equal((await post({ channel: 42 })).statusCode, 403);
  assert.equal((await post({}, {})).statusCode, 403, 'no CSRF header');
  const anonymous = new BrowserSession(t.app);
  const loggedOut = await post({}, { 'x-csrf-token': csrf }, anonymous);
  assert.equal(loggedOut.statusCode, 401);
  assert.deepEqual(loggedOut.json(), { message: 'Unauthenticated.' });
});

test('the centrifuge browser bundle is served from node_modules at /static/vendor/centrifuge.js', async () => {
  const res = await t.app.inject('/static/vendor/centrifuge.js');
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/javascript/);
  assert.match(res.body, /globalThis\.Centrifuge=/);
  assert.equal((await t.app.inject('/static/vendor/nothing.js')).statusCode, 404);
  const script = await t.app.inject('/static/dashboard.js');
  assert.equal(script.statusCode, 200);
  assert.match(String(script.headers['content-type']), /^text\/javascript/);
});

test("a logged-in streamer never reaches another streamer's donations through the overview feed", async () => {
  const a = await streamer(t);
  const b = await streamer(t);
  await createDonation(t.database.db, { userId: a.user.id, username: 'OnlyForA', amount: '1', currency: 'USD' });
  assert.match((await a.browser.get('/dashboard')).body, /OnlyForA/);
  assert.doesNotMatch((await b.browser.get('/dashboard')).body, /OnlyForA/);
  const bData = pageData(await b.browser.get('/dashboard'));
  assert.equal(bData.realtime.channels[0].channel, `$alerts:donation_${b.user.id}`);
});
