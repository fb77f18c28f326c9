import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { cookieNames, safeNext } from '../../src/web/session.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';

const PASSWORD = 'correct horse battery';

interface SetCookie {
  name: string;
  value: string;
  path?: string;
  domain?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: string;
  maxAge?: number;
  expires?: Date;
}
const setCookie = (res: LightMyRequestResponse, name: string) => (res.cookies as SetCookie[]).find((c) => c.name === name);

/** Logs in through the form (GET for the token, then POST), as a browser does. */
async function loggedIn(t: TestApp, email: string): Promise<BrowserSession> {
  const browser = new BrowserSession(t.app);
  await browser.get('/login');
  const res = await browser.postForm('/login', { email, password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return browser;
}

describe('cookies over https: __Host- names, Secure', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { PUBLIC_URL: 'https://alerts.example.test' } });
    await makeUser(t.database.db, { email: 'host@example.test', password: PASSWORD });
  });
  after(() => t.close());

  test('the CSRF and session cookies are __Host- prefixed: Secure, Path=/, no Domain, HttpOnly', async () => {
    const browser = new BrowserSession(t.app);
    const form = await browser.get('/login');
    const csrf = setCookie(form, '__Host-oa_csrf');
    assert.ok(csrf, `cookies: ${(form.cookies as SetCookie[]).map((c) => c.name)}`);
    const login = await browser.postForm('/login', { email: 'host@example.test', password: PASSWORD });
    assert.equal(login.statusCode, 303);
    const session = setCookie(login, '__Host-oa_session');
    assert.ok(session);
    for (const cookie of [csrf, session]) {
      assert.deepEqual([cookie.secure, cookie.path, cookie.domain, cookie.httpOnly, cookie.sameSite], [true, '/', undefined, true, 'Lax'], cookie.name);
    }
    assert.equal((await browser.get('/dashboard')).statusCode, 200);

    // An unprefixed cookie — what a sibling subdomain could plant — is not a session here.
    const planted = new BrowserSession(t.app);
    planted.cookies.set('oa_session', session.value);
    assert.equal((await planted.get('/dashboard')).statusCode, 302);
  });
});

describe('CSRF tokens are bound to the session', () => {
  let t: TestApp;
  let CSRF: string;
  before(async () => {
    t = await buildTestApp();
    CSRF = cookieNames(t.config).csrf;
    await makeUser(t.database.db, { email: 'alice@example.test', password: PASSWORD });
    await makeUser(t.database.db, { email: 'bob@example.test', password: PASSWORD });
  });
  after(() => t.close());

  test('over plain http the cookies keep plain names and are not Secure', async () => {
    const browser = new BrowserSession(t.app);
    const csrf = setCookie(await browser.get('/login'), 'oa_csrf');
    assert.ok(csrf);
    assert.equal(csrf.secure, undefined);
    const session = setCookie(await browser.postForm('/login', { email: 'alice@example.test', password: PASSWORD }), 'oa_session');
    assert.ok(session);
    assert.equal(session.secure, undefined);
  });

  test('log-in rotates the token: one minted before log-in is refused afterwards, even with its CSRF cookie', async () => {
    const browser = new BrowserSession(t.app);
    await browser.get('/login');
    const anonymousToken = browser.lastCsrf!;
    const anonymousCookie = browser.cookies.get(CSRF)!;
    const login = await browser.postForm('/login', { email: 'alice@example.test', password: PASSWORD });
    assert.equal(login.statusCode, 303);
    const dropped = setCookie(login, CSRF);
    assert.ok(dropped && dropped.value === '', 'the log-in answer drops the CSRF secret');

    browser.cookies.set(CSRF, anonymousCookie);
    const refused = await browser.postForm('/logout', { _csrf: anonymousToken });
    assert.equal(refused.statusCode, 403);
    assert.equal((await browser.get('/dashboard')).statusCode, 200, 'still logged in');

    const fresh = browser.lastCsrf!;
    assert.notEqual(fresh, anonymousToken);
    assert.equal((await browser.postForm('/logout', {})).statusCode, 303);
    assert.equal((await browser.get('/dashboard')).statusCode, 302);
  });

  test("another session's token is refused, even with that session's CSRF cookie planted beside it", async () => {
    const attacker = await loggedIn(t, 'alice@example.test');
    await attacker.get('/dashboard/goals');
    const attackerToken = attacker.lastCsrf!;
    const attackerCookie = attacker.cookies.get(CSRF)!;

    const victim = await loggedIn(t, 'bob@example.test');
    await victim.get('/dashboard/goals');
    const bob = await t.database.db.selectFrom('users').select('id').where('email', '=', 'bob@example.test').executeTakeFirstOrThrow();
    const goalsOfBob = () => t.database.db.selectFrom('goals').select('id').where('user_id', '=', bob.id).execute();

    assert.equal((await victim.postForm('/dashboard/goals', { title: 'Foreign token', goal_amount: '10', _csrf: attackerToken })).statusCode, 403);
    victim.cookies.set(CSRF, attackerCookie);
    assert.equal((await victim.postForm('/dashboard/goals', { title: 'Planted pair', goal_amount: '10', _csrf: attackerToken })).statusCode, 403);
    assert.deepEqual(await goalsOfBob(), []);

    // A pair minted in the anonymous state does not post for a session either, nor the reverse.
    const stranger = new BrowserSession(t.app);
    await stranger.get('/login');
    victim.cookies.set(CSRF, stranger.cookies.get(CSRF)!);
    assert.equal((await victim.postForm('/dashboard/goals', { title: 'Anonymous pair', goal_amount: '10', _csrf: stranger.lastCsrf! })).statusCode, 403);
    assert.deepEqual(await goalsOfBob(), []);
    stranger.cookies.set(CSRF, attackerCookie);
    assert.equal((await stranger.postForm('/login', { email: 'bob@example.test', password: PASSWORD, _csrf: attackerToken })).statusCode, 403);

    // The victim's own token still works once its own cookie is back.
    await victim.get('/dashboard/goals');
    victim.cookies.delete(CSRF);
    await victim.get('/dashboard/goals');
    assert.equal((await victim.postForm('/dashboard/goals', { title: 'Mine', goal_amount: '10' })).statusCode, 303);
    assert.equal((await goalsOfBob()).length, 1);
  });
});

describe('`next` after log-in never leaves the site', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await makeUser(t.database.db, { email: 'carol@example.test', password: PASSWORD });
  });
  after(() => t.close());

  // Values as the query parser hands them over (`/login?next=/%09/evil.example` is `/\t/evil.example`).
  const OFFSITE = ['/\t/evil.example', '/\t/x', '/\n/x', '/\r\n/x', '//x', '/\\x', '\\/x', 'https:x', 'https://evil.example/', '/a/..//evil.example', ' //x', '/', '', 'dashboard'];

  test('offsite, protocol-relative and control-character values fall back to /dashboard', () => {
    for (const value of OFFSITE) assert.equal(safeNext(value), '/dashboard', JSON.stringify(value));
    assert.equal(safeNext(['/dashboard/apps']), '/dashboard');
  });

  test('paths on this site are kept, with their query and fragment, percent-encoded', () => {
    assert.equal(safeNext('/dashboard/apps'), '/dashboard/apps');
    assert.equal(safeNext('/oauth/authorize?client_id=1&scope=a b&state=x#top'), '/oauth/authorize?client_id=1&scope=a%20b&state=x#top');
    assert.equal(safeNext('/%09/evil.example'), '/%09/evil.example', 'a literal %09 is a path segment on this site');
  });

  test('GET /login when logged in and POST /login redirect to /dashboard for each, never a 500', async () => {
    const browser = await loggedIn(t, 'carol@example.test');
    for (const value of OFFSITE) {
      const res = await browser.get(`/login?next=${encodeURIComponent(value)}`);
      assert.equal(res.statusCode, 302, `${JSON.stringify(value)}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers.location, '/dashboard', JSON.stringify(value));
    }
    for (const value of ['/\r\n/x', '/\t/evil.example', '//x']) {
      const fresh = new BrowserSession(t.app);
      await fresh.get('/login');
      const res = await fresh.postForm('/login', { email: 'carol@example.test', password: PASSWORD, next: value });
      assert.equal(res.statusCode, 303, `${JSON.stringify(value)}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers.location, '/dashboard');
    }
  });
});
