import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { chromiumMissing, launchChromium, screenshot, watchProblems } from '../browser/chromium.js';
import { buildTestApp, listen, makeApp, makeUser, type TestApp } from '../helper.js';
import { PASSWORD } from './helpers.js';

/**
 * The dashboard in real Chromium against a real listening server (CSP headers on): live donations
 * over our WebSocket, live goal and poll updates, and a screenshot of every page at phone and
 * desktop width. Skipped only on a machine without /usr/bin/chromium; with CI set it must run.
 */
const skip = chromiumMissing();

const PAGES = [
  ['overview', '/dashboard'],
  ['donations', '/dashboard/donations'],
  ['goals', '/dashboard/goals'],
  ['polls', '/dashboard/polls'],
  ['merchandise', '/dashboard/merchandise'],
  ['apps', '/dashboard/apps'],
  ['authorized-apps', '/dashboard/authorized-apps'],
  ['profile', '/dashboard/profile'],
  ['admin-users', '/admin/users'],
  ['admin-merchants', '/admin/merchants'],
  ['admin-rates', '/admin/rates'],
] as const;

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

/**
 * Script errors and CSP violations (`watchProblems`), and on the dashboard also every failed
 * response and every other console error.
 */
function watchErrors(page: Page): string[] {
  const errors = watchProblems(page);
  page.on('response', (res) => {
    if (res.status() >= 400) errors.push(`${res.status()} ${res.url()}`);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  return errors;
}

async function logIn(page: Page, email: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type="submit"]:has-text("Log in")')]);
}

test('overview: "Send test alert" and a donation created elsewhere both appear live, without a reload', { skip, timeout: 60_000 }, async () => {
  const user = await makeUser(t.database.db, { admin: true, name: 'Live Streamer' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await logIn(page, user.email);
  await page.waitForSelector('#live-status[data-state="connected"]', { timeout: 5000 });
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
  assert.equal(await page.locator('#donation-feed li').count(), 0);

  const started = Date.now();
  await page.click('#test-alert-form button');
  // The reply's fallback waits 3 s while connected: arriving sooner means it came over the WebSocket.
  await page.waitForSelector('#donation-feed li.donation', { timeout: 2500 });
  const testAlertMs = Date.now() - started;
  assert.match((await page.textContent('#donation-feed li .payin')) ?? '', /Sandbox/);
  const stored = await t.database.db.selectFrom('donations').selectAll().where('user_id', '=', user.id).execute();
  assert.equal(stored.length, 1);
  assert.equal(stored[0]!.payin_system, 'Sandbox');
  assert.equal(await page.getAttribute('#donation-feed li', 'data-id'), String(stored[0]!.id));

  const hostile = '<img src=x onerror="document.title=1">';
  const createdAt = Date.now();
  const donation = await createDonation(t.database.db, { userId: user.id, username: hostile, message: 'Great stream <b>!</b>', amount: '7.25', currency: 'EUR' });
  await page.waitForSelector(`#donation-feed li[data-id="${donation.id}"]`, { timeout: 2000 });
  const liveMs = Date.now() - createdAt;
  const first = page.locator('#donation-feed li').first();
  assert.equal(await first.locator('.donor').textContent(), hostile, 'the donor name renders as text');
  assert.equal(await first.locator('.message').textContent(), 'Great stream <b>!</b>');
  assert.equal(await first.locator('.amount').textContent(), '€7.25');
  assert.equal(await page.locator('#donation-feed img, #donation-feed b').count(), 0);
  assert.equal(await page.locator('#donation-feed li').count(), 2);
  assert.equal(await page.evaluate(() => (window as unknown as { marker: number }).marker), 42, 'no reload happened');
  assert.notEqual(await page.title(), '1');
  assert.deepEqual(errors, []);
  console.log(`# live: test alert shown after ${testAlertMs} ms, createDonation shown after ${liveMs} ms`);
  await context.close();
});

test('goals and polls update live; every dashboard page is screenshotted at 390 px and 1280 px', { skip, timeout: 90_000 }, async () => {
  const user = await makeUser(t.database.db, { admin: true, name: 'Screenshot Streamer', currency: 'USD' });
  // Some content, so the pages show what streamers see.
  for (const [username, message, amount, currency] of [
    ['Marta', 'Great stream, keep it up!', '5', 'USD'],
    ['NightOwl', 'Hydrate!', '20', 'EUR'],
    ['Pixel_Pirate', 'For the new microphone fund — this message is long enough to wrap on a phone screen.', '150', 'RUB'],
  ] as const) {
    await createDonation(t.database.db, { userId: user.id, username, message, amount, currency });
  }
  await makeApp(t, user.id, ['https://bot.example/callback', 'http://localhost:9000/callback']);
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await desktop.newPage();
  const errors = watchErrors(page);
  await logIn(page, user.email);

  await page.goto(`${base}/dashboard/goals`);
  await page.fill('input[name="title"]', 'New microphone');
  await page.fill('input[name="goal_amount"]', '200');
  await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Start goal")')]);
  await page.waitForSelector('#live-status[data-state="connected"]', { timeout: 5000 });
  assert.equal(await page.textContent('.goal .progress-line'), '$0.00 of $200.00 · 0%');
  await createDonation(t.database.db, { userId: user.id, username: 'Fan', amount: '50', currency: 'USD' });
  await page.waitForFunction(() => document.querySelector('.goal .progress-line')?.textContent === '$50.00 of $200.00 · 25%', null, { timeout: 2000 });
  assert.equal(await page.evaluate(() => (document.querySelector('.goal progress') as HTMLProgressElement).value), 50);

  await page.goto(`${base}/dashboard/polls`);
  await page.fill('input[name="title"]', 'Which game next?');
  await page.fill('textarea[name="options"]', 'Chess\nGo\nShogi');
  await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Start poll")')]);
  await page.waitForSelector('#live-status[data-state="connected"]', { timeout: 5000 });
  const poll = await t.database.db.selectFrom('polls').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  const go = await t.database.db.selectFrom('poll_options').select('id').where('poll_id', '=', poll.id).where('title', '=', 'Go').executeTakeFirstOrThrow();
  await createDonation(t.database.db, { userId: user.id, username: 'Voter', amount: '3', currency: 'USD', pollOptionId: go.id });
  await page.waitForSelector(`li.option.winner[data-option-id="${go.id}"]`, { timeout: 2000 });
  assert.match((await page.textContent(`li[data-option-id="${go.id}"] .option-value`)) ?? '', /1 vote · 100%/);

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const phonePage = await phone.newPage();
  const phoneErrors = watchErrors(phonePage);
  await logIn(phonePage, user.email);
  for (const [name, url] of PAGES) {
    for (const [label, p] of [['desktop', page], ['phone', phonePage]] as const) {
      await p.goto(`${base}${url}`);
      if (url === '/dashboard' || url === '/dashboard/goals' || url === '/dashboard/polls') await p.waitForSelector('#live-status[data-state="connected"]', { timeout: 5000 });
      await screenshot(p, `dashboard-${name}-${label}`);
      // Nothing wider than the screen: pages are usable at phone width without sideways scrolling.
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${url} (${label}) overflows horizontally by ${overflow}px`);
    }
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(phoneErrors, []);
  await desktop.close();
  await phone.close();
});
