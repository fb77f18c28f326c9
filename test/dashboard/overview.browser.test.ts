import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import jsqr from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import { DAY_MS } from '../../src/modules/donations/donation-stats.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { createPoll } from '../../src/modules/polls/polls.service.js';
import { chromiumMissing, launchChromium, screenshot, watchProblems } from '../browser/chromium.js';
import { buildTestApp, listen, makeApp, makeUser, type TestApp } from '../helper.js';
import { PASSWORD } from './helpers.js';

/**
 * The overview in real Chromium against a listening server (CSP on): the links with copy buttons
 * (read back from the clipboard), the QR code decoded from its pixels, the checklist ticking from
 * the real events, the chart's bars against the stored donations; the applications page after F5;
 * the consent page's policy. Skipped only without /usr/bin/chromium; with CI set it must run.
 */
const skip = chromiumMissing();

// jsqr is CommonJS typed as an ES default export: under NodeNext the default import is
// module.exports, which is the decoder function itself.
const jsQR = jsqr as unknown as typeof jsqr.default;

let t: TestApp;
let base: string;
let browser: Browser;

before(async () => {
  if (skip) return;
  t = await buildTestApp();
  base = await listen(t.app);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

async function logIn(page: Page, email: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type="submit"]:has-text("Log in")')]);
}

/** The URL a PUBLIC_URL-based link points to on the server under test (listening on port 0). */
const onTestServer = (url: string) => url.replace(t.config.publicUrl, base);

const stepDone = (page: Page, step: string) => page.getAttribute(`#checklist li[data-step="${step}"]`, 'data-done');

/** Rasterizes the inline QR SVG in the page (a data: image on a canvas) and decodes the pixels with jsQR. */
async function decodeQr(page: Page): Promise<string | undefined> {
  const image = await page.evaluate(async () => {
    const svg = document.querySelector('#donation-qr svg')!;
    const img = new Image();
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg.outerHTML)}`;
    await img.decode();
    const size = 400;
    const canvas = document.createElement('canvas');
    canvas.width = size;
    canvas.height = size;
    const ctx = canvas.getContext('2d')!;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, 0, 0, size, size);
    return { width: size, height: size, data: Array.from(ctx.getImageData(0, 0, size, size).data) };
  });
  return jsQR(Uint8ClampedArray.from(image.data), image.width, image.height)?.data;
}

test('overview: links with copy, a QR code that decodes to the donation URL, and a checklist that ticks from real events', { skip, timeout: 90_000 }, async () => {
  const user = await makeUser(t.database.db, { name: 'Onboarding Streamer', currency: 'USD' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await logIn(page, user.email);

  assert.equal(await page.textContent('#checklist-count'), '0 of 3 done');
  for (const step of ['widget_added', 'test_alert_sent', 'link_shared']) assert.equal(await stepDone(page, step), '0', step);
  await screenshot(page, 'overview-new-account');

  // The donation link: absolute, from PUBLIC_URL, the streamer's own page.
  const donationUrl = await page.inputValue('#donation-url');
  assert.equal(donationUrl, `${t.config.publicUrl}/r/${user.code}`);
  assert.equal(await decodeQr(page), donationUrl, 'the QR code encodes exactly the donation URL');
  assert.equal((await page.request.get(onTestServer(donationUrl))).status(), 200, 'the link opens the donor page');

  await page.click('button[data-copy-from="donation-url"]');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), donationUrl);
  await page.waitForSelector('#checklist li[data-step="link_shared"][data-done="1"]', { timeout: 5000 });
  assert.equal(await page.textContent('#checklist-count'), '1 of 3 done');

  // The three widget URLs, each copied as shown and each opening its widget.
  const widgetUrls: Record<string, string> = {};
  for (const kind of ['alerts', 'goal', 'poll']) {
    await page.click(`button[data-copy-from="widget-url-${kind}"]`);
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, await page.inputValue(`#widget-url-${kind}`));
    assert.match(copied, new RegExp(`^${t.config.publicUrl.replace(/[.]/g, '\\.')}/widget/${kind}\\?token=[A-Za-z0-9_-]+$`));
    widgetUrls[kind] = copied;
  }

  // OBS opening the alerts widget ticks "add widget to OBS" (the widget page records it).
  const obs = await context.newPage();
  await obs.goto(onTestServer(widgetUrls.alerts!));
  await obs.close();
  // "Send test alert" ticks at once on the page, and is recorded.
  await page.click('#test-alert-form button');
  await page.waitForSelector('#checklist li[data-step="test_alert_sent"][data-done="1"]', { timeout: 5000 });
  await page.reload();
  for (const step of ['widget_added', 'test_alert_sent', 'link_shared']) assert.equal(await stepDone(page, step), '1', `${step} after reload`);
  assert.equal(await page.isVisible('#checklist-all'), true);
  const rows = await t.database.db.selectFrom('onboarding_milestones').select('milestone').where('user_id', '=', user.id).execute();
  assert.deepEqual(rows.map((r) => r.milestone).sort(), ['link_shared', 'test_alert_sent', 'widget_added']);
  await screenshot(page, 'overview-checklist-done');
  assert.deepEqual(problems, []);
  await context.close();
});

test('overview: donations per day drawn as bars whose heights match the stored sums; top donors, goal and poll', { skip, timeout: 60_000 }, async () => {
  const user = await makeUser(t.database.db, { name: 'Chart Streamer', currency: 'USD' });
  const today = Math.floor(Date.now() / DAY_MS);
  // [days ago, donor, amount, currency]
  const plan = [
    [0, 'Marta', '5', 'USD'], [0, 'NightOwl', '12.50', 'USD'],
    [2, 'Marta', '40', 'USD'],
    [5, 'Pixel', '7', 'EUR'], [5, 'Pixel', '3', 'USD'], [5, 'Jonas', '1', 'USD'],
    [29, 'Old', '2', 'USD'],
    [31, 'TooOld', '500', 'USD'],
  ] as const;
  for (const [ago, username, amount, currency] of plan) {
    const d = await createDonation(t.database.db, { userId: user.id, username, amount, currency, message: '' });
    await t.database.db.updateTable('donations').set({ created_at: (today - ago) * DAY_MS + 3_600_000 }).where('id', '=', d.id).execute();
  }
  await createGoal(t.database.db, user.id, { title: 'New microphone', goalAmount: '200', startAmount: '50' });
  await createPoll(t.database.db, user.id, { title: 'Next game?', options: ['Chess', 'Go'] });

  // What the chart must show, from the stored rows (the page computes it in SQL).
  const stored = await t.database.db.selectFrom('donations').select(['created_at', 'amount_in_user_currency']).where('user_id', '=', user.id).execute();
  const expected = new Map<string, { count: number; total: number }>();
  for (const row of stored) {
    const day = Math.floor(Number(row.created_at) / DAY_MS);
    if (day < today - 29) continue;
    const key = new Date(day * DAY_MS).toISOString().slice(0, 10);
    const e = expected.get(key) ?? { count: 0, total: 0 };
    e.count += 1;
    e.total += Number(row.amount_in_user_currency);
    expected.set(key, e);
  }
  const max = Math.max(...[...expected.values()].map((e) => e.total));

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await logIn(page, user.email);
  const bars = await page.$$eval('svg.daily-chart rect.bar', (rects) =>
    rects.map((r) => ({ day: r.getAttribute('data-day')!, count: Number(r.getAttribute('data-count')), total: Number(r.getAttribute('data-total')), height: Number(r.getAttribute('height')), rendered: r.getBoundingClientRect().height })),
  );
  assert.equal(bars.length, 30, 'one bar per day');
  assert.equal(bars.at(-1)!.day, new Date(today * DAY_MS).toISOString().slice(0, 10), 'the last bar is today');
  assert.equal(bars.filter((b) => b.count > 0).length, expected.size);
  const plot = Math.max(...bars.map((b) => b.height));
  for (const bar of bars) {
    const e = expected.get(bar.day) ?? { count: 0, total: 0 };
    assert.equal(bar.count, e.count, bar.day);
    assert.equal(bar.total, e.total, bar.day);
    assert.ok(Math.abs(bar.height - (e.total / max) * plot) < 0.02, `${bar.day}: height ${bar.height} for ${e.total} of ${max}`);
    if (e.total > 0) assert.ok(bar.rendered > 0, `${bar.day} is visible`);
  }
  assert.equal(bars.find((b) => b.height === plot)!.total, max, 'the tallest bar is the biggest day');
  assert.match((await page.textContent('svg.daily-chart rect.bar:last-of-type title')) ?? '', /2 donations/);

  const donors = await page.$$eval('table.top-donors tbody tr', (trs) => trs.map((tr) => [tr.querySelector('.donor')!.textContent, tr.querySelectorAll('td')[3]!.textContent]));
  assert.deepEqual(donors[0], ['Marta', '2'], 'the biggest donor first, with both donations');
  assert.equal(donors.some(([name]) => name === 'TooOld'), false, 'older than 30 days is left out');
  assert.equal(await page.textContent('#active-goals .progress-line'), '$50.00 of $200.00 · 25%');
  assert.equal(await page.locator('#active-poll ol.options li').count(), 2);
  await screenshot(page, 'overview-chart');
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const small = await phone.newPage();
  await logIn(small, user.email);
  await screenshot(small, 'overview-chart-390');
  await phone.close();
  assert.deepEqual(problems, []);
  await context.close();
});

test('applications: F5 after creating one creates no second app and no second secret', { skip, timeout: 60_000 }, async () => {
  const user = await makeUser(t.database.db, { name: 'App Maker' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await logIn(page, user.email);
  await page.goto(`${base}/dashboard/apps`);
  await page.fill('form[action="/dashboard/apps"] input[name="name"]', 'Reload bot');
  await page.fill('form[action="/dashboard/apps"] textarea[name="redirect_uris"]', 'https://bot.example/cb');
  await Promise.all([page.waitForURL(`${base}/dashboard/apps`), page.click('button:has-text("Create application")')]);
  const secret = await page.textContent('#client-secret');
  assert.ok(secret && secret.length > 20, 'the secret is shown once');
  await screenshot(page, 'apps-created');
  const reloaded = await page.reload();
  assert.equal(reloaded!.request().method(), 'GET', 'F5 repeats the GET the redirect landed on');
  assert.equal(await page.locator('#client-secret').count(), 0, 'the secret is not shown again');
  assert.equal((await page.content()).includes(secret), false);
  const apps = await t.database.db.selectFrom('apps').select('id').where('owner_id', '=', user.id).execute();
  assert.equal(apps.length, 1, 'still one application');
  await screenshot(page, 'apps-after-reload');
  assert.deepEqual(problems, []);
  await context.close();
});

test('consent page: the full Content-Security-Policy plus frame-ancestors none; pages and widgets have our favicon', { skip, timeout: 60_000 }, async () => {
  const user = await makeUser(t.database.db, { name: 'Consenting Streamer' });
  const owner = await makeUser(t.database.db);
  const { app } = await makeApp(t, owner.id);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await logIn(page, user.email);
  const url = `${base}/oauth/authorize?response_type=code&client_id=${app.client_id}&redirect_uri=${encodeURIComponent('https://client.example.test/callback')}&scope=oauth-user-show`;
  const res = await page.goto(url);
  assert.equal(res!.status(), 200);
  assert.equal(await page.isVisible('button[value="allow"]'), true);
  const csp = String(res!.headers()['content-security-policy']);
  for (const directive of ["default-src 'self'", "script-src 'self'", "script-src-attr 'none'", "style-src 'self'", "object-src 'none'", "base-uri 'self'", "frame-ancestors 'none'"]) {
    assert.ok(csp.split(';').map((d) => d.trim()).includes(directive), `${directive} in ${csp}`);
  }
  assert.equal(res!.headers()['x-frame-options'], 'DENY');
  await screenshot(page, 'consent');

  assert.equal(await page.getAttribute('link[rel="icon"]', 'href'), '/static/favicon.svg');
  for (const path of ['/favicon.ico', '/static/favicon.svg']) {
    const icon = await page.request.get(`${base}${path}`);
    assert.equal(icon.status(), 200, path);
    assert.match(icon.headers()['content-type'] ?? '', /^image\/svg\+xml/, path);
    assert.match(icon.headers()['cache-control'] ?? '', /max-age=\d+/, path);
    assert.match(await icon.text(), /<svg/);
  }
  assert.deepEqual(problems, []);
  await context.close();
});
