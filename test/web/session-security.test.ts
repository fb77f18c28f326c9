import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { cookieNames } from '../../src/web/session.js';
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
    assert.equal((await victim.postForm('/dashboard/goals', { title: 'Mine', goal_amount: '10' })).statusCode, 201);
    assert.equal((await goalsOfBob()).length, 1);
  });
});
