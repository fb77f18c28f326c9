import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { cookieNames } from '../../src/web/session.js';
import { BrowserSession } from '../browser-session.js';
import { makeUser, type TestApp } from '../helper.js';

export const PASSWORD = 'correct horse battery';

/** A browser logged in as `user` (a real session row; the log-in form itself is tested in test/web). */
export async function browserFor(t: TestApp, user: UserRow): Promise<BrowserSession> {
  const browser = new BrowserSession(t.app);
  browser.cookies.set(cookieNames(t.config).session, await startSession(t.database.db, user.id));
  return browser;
}

export async function streamer(t: TestApp, overrides: Parameters<typeof makeUser>[1] = {}) {
  const user = await makeUser(t.database.db, overrides);
  return { user, browser: await browserFor(t, user) };
}

/** The page's embedded JSON data for dashboard.js. */
export function pageData(res: LightMyRequestResponse): any {
  const match = /<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/.exec(res.body);
  assert.ok(match, 'the page embeds its data');
  return JSON.parse(match[1]!);
}

/** No inline script or handler attribute anywhere (CSP `script-src 'self'`). */
export function assertNoInlineScript(body: string): void {
  for (const tag of body.match(/<script\b[^>]*>/g) ?? []) {
    assert.ok(/\bsrc="\/static\//.test(tag) || /type="application\/json"/.test(tag), `inline script: ${tag}`);
  }
  for (const tag of body.match(/<[a-z][^>]*>/gi) ?? []) {
    const attributes = tag.replace(/"[^"]*"/g, '""');
    assert.doesNotMatch(attributes, /\son[a-z]+\s*=/i, `inline event handler: ${tag}`);
    assert.doesNotMatch(attributes, /\sstyle\s*=/i, `inline style: ${tag}`);
  }
}

export function assertHtml(res: LightMyRequestResponse, status = 200): void {
  assert.equal(res.statusCode, status, res.body.slice(0, 500));
  assert.match(String(res.headers['content-type']), /text\/html/);
}

/**
 * An accepted form (post/redirect/get): a 303 to `location`, a GET page, so reloading it repeats
 * nothing. Returns that page as the browser then shows it, with the one-time notice.
 */
export async function followAccepted(browser: BrowserSession, res: LightMyRequestResponse, location: string): Promise<LightMyRequestResponse> {
  assert.equal(res.statusCode, 303, res.body.slice(0, 500));
  assert.equal(res.headers.location, location);
  const page = await browser.follow(res);
  assertHtml(page);
  return page;
}
