import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { issueToken, makeApp, makeUser, type TestApp } from '../helper.js';
import { realtimeTestApp } from '../realtime/app-topology.js';
import { ROOT } from '../process.js';

/**
 * The pinned client of the main TS library, centrifuge-js 2.8.5, unmodified, in a real browser on
 * another origin: its XMLHttpRequest to `subscribeEndpoint` (our /api/v1/centrifuge/subscribe) is a
 * credentialed cross-origin call with `X-Requested-With` (compatibility.md §1 CORS), then it subscribes over
 * the legacy protocol and receives a donation.
 */
describe('centrifuge-js 2.8.5 in Chromium with subscribeEndpoint', { skip: chromiumMissing() }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let appOrigin: http.Server;
  let pageUrl: string;

  before(async () => {
    ({ t, url: base } = await realtimeTestApp());
    browser = await launchChromium();
    // A third-party app's page, on its own origin, using the library as shipped.
    const bundle = fs.readFileSync(path.join(ROOT, 'node_modules/centrifuge2/dist/centrifuge.js'));
    appOrigin = http.createServer((req, res) => {
      if (req.url === '/centrifuge.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><script src="/centrifuge.js"></script>');
    });
    await new Promise<void>((r) => appOrigin.listen(0, '127.0.0.2', () => r()));
    pageUrl = `http://127.0.0.2:${(appOrigin.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => appOrigin?.close(r));
    await t?.close();
  });

  test('subscribes through our endpoint and receives a donation', async () => {
    const streamer = await makeUser(t.database.db);
    const { app } = await makeApp(t, streamer.id);
    const token = await issueToken(t, { userId: streamer.id, clientId: app.client_id, scopes: ['oauth-user-show', 'oauth-donation-subscribe'] });
    const profile = (await t.app.inject({ url: '/api/v1/user/oauth', headers: { authorization: `Bearer ${token}` } })).json().data;
    const channel = `$alerts:donation_${streamer.id}`;

    const page = await browser.newPage();
    try {
      await page.goto(pageUrl);
      // A string, not a function: tsx would wrap a function's inner callbacks in helpers the page lacks.
      const params = { wsUrl: `${base.replace('http', 'ws')}/connection/websocket`, endpoint: `${base}/api/v1/centrifuge/subscribe`, accessToken: token, socketToken: profile.socket_connection_token, channel };
      await page.evaluate(`(() => {
        const p = ${JSON.stringify(params)};
        window.events = [];
        const centrifuge = new Centrifuge(p.wsUrl, { subscribeEndpoint: p.endpoint, subscribeHeaders: { Authorization: 'Bearer ' + p.accessToken } });
        centrifuge.setToken(p.socketToken);
        centrifuge.subscribe(p.channel, {
          subscribe: function (ctx) { window.events.push({ kind: 'subscribe', ctx: ctx }); },
          error: function (ctx) { window.events.push({ kind: 'error', ctx: ctx }); },
          publish: function (ctx) { window.events.push({ kind: 'publish', data: ctx.data }); },
        });
        centrifuge.connect();
      })()`);
      await page.waitForFunction(() => (window as any).events.some((e: any) => e.kind === 'subscribe' || e.kind === 'error'), null, { timeout: 5000 });
      const first = await page.evaluate(() => (window as any).events[0]);
      assert.equal(first.kind, 'subscribe', JSON.stringify(first));

      const donation = await createDonation(t.database.db, { userId: streamer.id, amount: '9.99', currency: 'EUR', username: 'Browser donor', message: 'hi from 2.8.5' });
      await page.waitForFunction(() => (window as any).events.some((e: any) => e.kind === 'publish'), null, { timeout: 3000 });
      const published = await page.evaluate(() => (window as any).events.find((e: any) => e.kind === 'publish').data);
      assert.deepEqual(published, { ...donation, reason: 'default' });
    } finally {
      await page.close();
    }
  });
});
