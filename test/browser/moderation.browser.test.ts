import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { createCustomAlert } from '../../src/modules/custom-alerts/custom-alerts.service.js';
import { DEFAULT_SETTINGS, saveModerationSettings, type ModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { createVariation } from '../../src/modules/widgets/variations.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { cookieNames } from '../../src/web/session.js';
import { buildTestApp, listen, makeApp, makeUser, type TestApp } from '../helper.js';
import { until } from '../wait.js';
import { ChromiumPages, chromiumMissing, screenshot } from './chromium.js';

const skip = chromiumMissing();

let t: TestApp;
let base: string;
let chrome: ChromiumPages;
let clientId: number;

function newPage(): Promise<Page> {
  return chrome.newPage({ viewport: { width: 1000, height: 700 } });
}

/** A streamer with one donation variation shown for `durationMs`, and their moderation rules. */
async function streamerWith(rules: Partial<ModerationSettings>, durationMs = 1500): Promise<UserRow> {
  const user = await makeUser(t.database.db, { currency: 'USD' });
  await createVariation(t.database.db, user.id, { type: 'donation', name: 'donation', minAmount: '0', durationMs: String(durationMs), layout: 'text-only', textTemplate: '{username} — {amount} {currency}', enabled: '1' });
  await saveModerationSettings(t.database.db, user.id, { ...DEFAULT_SETTINGS, ...rules });
  return user;
}

async function openWidget(user: UserRow): Promise<Page> {
  const page = await newPage();
  const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, user.id);
  assert.equal((await page.goto(`${base}/widget/alerts?token=${token}`))?.status(), 200);
  await page.waitForSelector('body[data-state="live"]', { timeout: 5000 });
  return page;
}

/** The streamer's dashboard, logged in through a real session cookie. */
async function openDashboard(user: UserRow, path: string): Promise<Page> {
  const page = await newPage();
  const value = await startSession(t.database.db, user.id);
  await page.context().addCookies([{ name: cookieNames(t.config).session, value, url: base }]);
  assert.equal((await page.goto(`${base}${path}`))?.status(), 200);
  return page;
}

/** A donor gives through the donor page in Chromium. */
async function donate(user: UserRow, username: string, message: string, amount = '5'): Promise<void> {
  const donor = await newPage();
  await donor.goto(`${base}/r/${user.code}`);
  await donor.fill('input[name="username"]', username);
  await donor.fill('input[name="amount"]', amount);
  await donor.selectOption('select[name="currency"]', 'USD');
  await donor.fill('textarea[name="message"]', message);
  await donor.click('form.donor-form button[type="submit"]');
  await donor.waitForURL(/\/thanks\//);
  await donor.close();
}

const displayed = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).OpenAlertsWidget.displayed.slice());
const skipped = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).OpenAlertsWidget.skipped.slice());

/**
 * Publications on a channel arrive in order: a custom alert (which this widget skips, having no
 * custom variation) sent after a held donation shows the widget has processed everything up to it.
 */
async function marker(page: Page, user: UserRow): Promise<void> {
  const alert = await createCustomAlert(t.database.db, { userId: user.id, clientId, header: 'marker', message: '' });
  await until(async () => (await skipped(page)).includes(`custom:${alert.id}`), 10_000, 'the marker alert reached the widget');
}

async function sceneShot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => document.documentElement.style.setProperty('background', '#2d3b4e'));
  await screenshot(page, name, { fullPage: false });
}

describe('moderation in Chromium', { skip }, () => {
  before(async () => {
    t = await buildTestApp();
    base = await listen(t.app);
    chrome = await ChromiumPages.launch();
    const owner = await makeUser(t.database.db);
    clientId = (await makeApp(t, owner.id)).app.client_id;
  });
  afterEach(() => chrome.closePages());
  after(async () => {
    await chrome?.close();
    await t?.close();
    assert.deepEqual(chrome.problems(), [], 'no page errors or CSP violations');
  });

  test('a held donation appears on the widget only after approval, and never after rejection', async () => {
    const user = await streamerWith({ approvalRequired: true });
    const widget = await openWidget(user);
    await donate(user, 'Alice', 'Please approve me');
    await marker(widget, user);
    assert.deepEqual(await displayed(widget), [], 'held: not on the widget');

    const dashboard = await openDashboard(user, '/dashboard/moderation');
    const item = await dashboard.waitForSelector('#approval-queue li.held');
    assert.match(await item.textContent() ?? '', /Please approve me/);
    await screenshot(dashboard, 'moderation-queue');
    await dashboard.click('#approval-queue li.held button[data-action="approve"]');
    await dashboard.waitForSelector('.notice');
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Alice — 5 USD');
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), 'Please approve me');
    await sceneShot(widget, 'moderation-approved-alert');

    await donate(user, 'Mallory', 'Reject me');
    await dashboard.goto(`${base}/dashboard/moderation`);
    assert.match(await dashboard.textContent('#approval-queue') ?? '', /Reject me/);
    await dashboard.click('#approval-queue li.held button[data-action="reject"]');
    await dashboard.waitForSelector('.notice');
    assert.match(await dashboard.textContent('.notice') ?? '', /rejected/);
    await marker(widget, user);
    assert.equal((await displayed(widget)).length, 1, 'the rejected alert never reached the widget');
    await screenshot(dashboard, 'moderation-after-reject');
  });

  test('a banned word is masked on the widget and on the dashboard', async () => {
    const user = await streamerWith({ bannedWords: ['crap'], links: 'remove' });
    const widget = await openWidget(user);
    const overview = await openDashboard(user, '/dashboard');
    await overview.waitForSelector('#live-status[data-state="connected"]', { timeout: 10_000 });
    // Cyrillic с and а in "сrаp": the look-alike spelling is masked too.
    await donate(user, 'Bob', 'what a сrаp stream, see example.com');
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), 'what a **** stream, see');
    await sceneShot(widget, 'moderation-masked-widget');

    const live = await overview.waitForSelector('#donation-feed li.donation .message', { timeout: 10_000 });
    assert.equal(await live.textContent(), 'what a **** stream, see');
    await screenshot(overview, 'moderation-masked-overview');
    const list = await openDashboard(user, '/dashboard/donations');
    const cell = await list.textContent('table.donations td.message');
    assert.equal(cell?.trim(), 'what a **** stream, see');
    assert.doesNotMatch(await list.content(), /сrаp|example\.com/);
    await screenshot(list, 'moderation-masked-donations');
  });

  test('"Skip current alert" removes the alert the open widget shows', async () => {
    const user = await streamerWith({}, 60_000);
    const widget = await openWidget(user);
    const dashboard = await openDashboard(user, '/dashboard/moderation');
    await donate(user, 'Carol', 'A long alert');
    await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    await sceneShot(widget, 'moderation-before-skip');
    await dashboard.click('#skip-alert-form button');
    await dashboard.waitForSelector('.notice');
    await widget.waitForSelector('.alert', { state: 'detached', timeout: 10_000 });
    const ended = await widget.evaluate(() => (window as any).OpenAlertsWidget.endedEarly.slice());
    assert.equal(ended.length, 1);
    assert.match(ended[0], /^donation:\d+$/);
    await sceneShot(widget, 'moderation-after-skip');
  });
});
