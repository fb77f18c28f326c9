import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, issueToken, type TestApp } from '../helper.js';
import { assertHtml, streamer } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

async function created(browser: Awaited<ReturnType<typeof streamer>>['browser'], name = 'My bot') {
  await browser.get('/dashboard/apps');
  const posted = await browser.postForm('/dashboard/apps', { name, redirect_uris: 'https://bot.example/cb' });
  assert.equal(posted.statusCode, 303, posted.body);
  assert.equal(posted.headers.location, '/dashboard/apps');
  const res = await browser.follow(posted);
  assertHtml(res);
  const clientId = Number(/client_id <code>(\d+)<\/code>/.exec(res.body)![1]);
  const secret = /id="client-secret">([^<]+)</.exec(res.body)![1]!;
  return { clientId, secret, body: res.body };
}

test('applications: edit the name and redirect URIs; errors stay beside the edited app’s form', async () => {
  const { browser } = await streamer(t);
  const { clientId } = await created(browser);
  const page = await browser.get('/dashboard/apps');
  assert.match(page.body, new RegExp(`action="/dashboard/apps/${clientId}/edit"`));
  assert.match(page.body, /<textarea name="redirect_uris" rows="3" required>https:\/\/bot.example\/cb<\/textarea>/);

  const saved = await browser.postForm(`/dashboard/apps/${clientId}/edit`, { name: 'Renamed <i>bot</i>', redirect_uris: 'https://bot.example/cb\r\nhttps://bot.example/other' });
  assert.equal(saved.statusCode, 303);
  const ok = await browser.follow(saved);
  assertHtml(ok);
  assert.match(ok.body, /Application saved/);
  assert.match(ok.body, /Renamed &lt;i&gt;bot&lt;\/i&gt;/);
  const row = await t.database.db.selectFrom('apps').selectAll().where('id', '=', clientId).executeTakeFirstOrThrow();
  assert.equal(row.name, 'Renamed <i>bot</i>');
  assert.deepEqual(JSON.parse(row.redirect_uris), ['https://bot.example/cb', 'https://bot.example/other']);

  const bad = await browser.postForm(`/dashboard/apps/${clientId}/edit`, { name: '', redirect_uris: 'javascript:alert(1)' });
  assertHtml(bad, 422);
  assert.match(bad.body, /<details class="edit" open>/);
  assert.match(bad.body, /The name field is required/);
  assert.match(bad.body, /uses a forbidden scheme/);
  assert.match(bad.body, /javascript:alert\(1\)<\/textarea>/, 'the form keeps what was typed');
  const unchanged = await t.database.db.selectFrom('apps').selectAll().where('id', '=', clientId).executeTakeFirstOrThrow();
  assert.equal(unchanged.name, 'Renamed <i>bot</i>');

  const forged = await browser.postForm(`/dashboard/apps/${clientId}/edit`, { name: 'x', redirect_uris: 'https://evil.example/cb', _csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
});

test("another streamer can neither see, edit, rotate nor delete someone else's application", async () => {
  const owner = await streamer(t);
  const { clientId } = await created(owner.browser, 'Owned app');
  const intruder = await streamer(t);
  const page = await intruder.browser.get('/dashboard/apps');
  assert.doesNotMatch(page.body, /Owned app/);
  for (const action of ['edit', 'rotate', 'delete']) {
    const res = await intruder.browser.postForm(`/dashboard/apps/${clientId}/${action}`, { name: 'Stolen', redirect_uris: 'https://evil.example/cb' });
    assert.equal(res.statusCode, 404, action);
  }
  const row = await t.database.db.selectFrom('apps').selectAll().where('id', '=', clientId).executeTakeFirstOrThrow();
  assert.equal(row.name, 'Owned app');
});

test('creating an application answers 303; the secret shows once, and reloading creates nothing', async () => {
  const { user, browser } = await streamer(t);
  const { secret, body } = await created(browser, 'Reloaded bot');
  assert.match(body, /Application Reloaded bot created\./);
  const reload = await browser.get('/dashboard/apps');
  assertHtml(reload);
  assert.equal(reload.body.includes(secret), false, 'the secret is not shown again');
  assert.doesNotMatch(reload.body, /id="client-secret"/);
  const apps = await t.database.db.selectFrom('apps').select('id').where('owner_id', '=', user.id).execute();
  assert.equal(apps.length, 1);
});

test('a flash is for the session it was set in, and only once', async () => {
  const { browser } = await streamer(t);
  await browser.get('/dashboard/apps');
  const posted = await browser.postForm('/dashboard/apps', { name: 'Flash bot', redirect_uris: 'https://bot.example/cb' });
  const flash = [...browser.cookies].find(([name]) => name.endsWith('oa_flash'));
  assert.ok(flash, 'the redirect sets the flash cookie');
  assert.match(String(posted.headers['set-cookie']), /HttpOnly/i);
  const other = await streamer(t);
  other.browser.cookies.set(flash[0], flash[1]);
  const stolen = await other.browser.get('/dashboard/apps');
  assert.doesNotMatch(stolen.body, /id="client-secret"/, 'another session cannot read it');
  browser.cookies.set(flash[0], `${flash[1]}x`);
  assertHtml(await browser.get('/dashboard/apps'), 200);
});

test('rotating shows the new secret once; deleting an app stops its tokens at once', async () => {
  const { user, browser } = await streamer(t);
  const { clientId, secret } = await created(browser);
  const rotation = await browser.postForm(`/dashboard/apps/${clientId}/rotate`, {});
  assert.equal(rotation.statusCode, 303);
  const rotated = await browser.follow(rotation);
  const next = /id="client-secret">([^<]+)</.exec(rotated.body)![1]!;
  assert.notEqual(next, secret);
  assert.equal((await browser.get('/dashboard/apps')).body.includes(next), false);

  const token = await issueToken(t, { userId: user.id, clientId, scopes: ['oauth-user-show'] });
  const profile = () => t.app.inject({ url: '/api/v1/user/oauth', headers: { authorization: `Bearer ${token}` } });
  assert.equal((await profile()).statusCode, 200, 'the token works (and is now cached)');
  const deleted = await browser.postForm(`/dashboard/apps/${clientId}/delete`, {});
  assert.equal(deleted.statusCode, 303);
  assert.equal((await profile()).statusCode, 401);
});
