import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { buildTestApp, listen, type TestApp } from '../helper.js';
import { chromiumMissing, launchChromium, screenshot, watchProblems } from './chromium.js';

/**
 * Issue 6: a new streamer signs up, creates an application, and authorizes it through the consent
 * page, in a real browser; the third-party app then exchanges the code and calls the API.
 */
describe('sign up → create an app → authorize it (Chromium)', { skip: chromiumMissing() }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let clientSite: http.Server;
  let callback: string;

  before(async () => {
    t = await buildTestApp();
    base = await listen(t.app);
    browser = await launchChromium();
    // The third-party app's redirect endpoint: it only has to exist and answer.
    clientSite = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title><p>Signed in.</p>'));
    await new Promise<void>((r) => clientSite.listen(0, '127.0.0.1', () => r()));
    callback = `http://127.0.0.1:${(clientSite.address() as AddressInfo).port}/callback`;
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => clientSite?.close(r));
    await t?.close();
  });

  test('the whole journey', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${base}/signup`);
      await screenshot(page, 'journey-signup');
      await page.fill('input[name="email"]', 'journey@example.test');
      await page.fill('input[name="name"]', 'Journey');
      await page.fill('input[name="password"]', 'a long passphrase');
      await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type="submit"]')]);

      await page.goto(`${base}/dashboard/apps`);
      await page.fill('input[name="name"]', 'Overlay Bot');
      await page.fill('textarea[name="redirect_uris"]', callback);
      await Promise.all([page.waitForLoadState('load'), page.click('text=Create application')]);
      const secret = (await page.textContent('#client-secret'))!.trim();
      const clientId = Number(await page.textContent('.tag code'));
      assert.ok(secret.length >= 32);
      assert.ok(clientId > 0);
      await screenshot(page, 'journey-app-created');

      const authorize = new URL(`${base}/oauth/authorize`);
      authorize.search = new URLSearchParams({ client_id: String(clientId), redirect_uri: callback, response_type: 'code', scope: 'oauth-user-show oauth-donation-index', state: 'xyz-123' }).toString();
      await page.goto(authorize.toString());
      assert.match(await page.textContent('main') ?? '', /Overlay Bot/);
      assert.match(await page.textContent('main') ?? '', /View your donations/);
      await screenshot(page, 'journey-consent');
      await Promise.all([page.waitForURL((url) => url.toString().startsWith(callback)), page.click('button[value="allow"]')]);

      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('state'), 'xyz-123');
      const code = landed.searchParams.get('code');
      assert.ok(code);

      const tokenRes = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: String(clientId), client_secret: secret, redirect_uri: callback, code }),
      });
      assert.equal(tokenRes.status, 200);
      const tokens = await tokenRes.json();
      assert.equal(tokens.token_type, 'Bearer');
      assert.ok(tokens.refresh_token);
      const profile = await fetch(`${base}/api/v1/user/oauth`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(profile.status, 200);
      assert.equal((await profile.json()).data.email, 'journey@example.test');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
