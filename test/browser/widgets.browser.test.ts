import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { createPoll } from '../../src/modules/polls/polls.service.js';
import { createVariation } from '../../src/modules/widgets/variations.service.js';
import { issueToken, listen } from '../helper.js';
import { PASSWORD, widgetWorld, type WidgetWorld } from '../widgets/fixture.js';
import { until } from '../wait.js';
import { ChromiumPages, chromiumMissing, screenshot, watchProblems } from './chromium.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

const skip = chromiumMissing();

let w: WidgetWorld;
let base: string;
let chrome: ChromiumPages;

/**
 * Runs in every page before its scripts: records each WebSocket and, while `__blockWs` is set,
 * points new ones at a closed port — so a test can cut the connection and keep it down. A string,
 * not a function: the test transpiler would wrap a function with helpers the page lacks.
 */
const CONTROL_WEBSOCKETS = `(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.__blockWs = false;
  function Controlled(url, protocols) {
    const ws = new Native(window.__blockWs ? 'ws://127.0.0.1:9/' : url, protocols);
    window.__sockets.push(ws);
    return ws;
  }
  Controlled.prototype = Native.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Controlled[k] = Native[k];
  window.WebSocket = Controlled;
})();`;

function newPage(): Promise<Page> {
  return chrome.newPage({ viewport: { width: 900, height: 640 } }, CONTROL_WEBSOCKETS);
}

async function openWidget(kind: 'alerts' | 'goal' | 'poll', token: string, query = ''): Promise<Page> {
  const page = await newPage();
  const res = await page.goto(`${base}/widget/${kind}?token=${token}${query}`);
  assert.equal(res?.status(), 200);
  await page.waitForSelector('body[data-state="live"]', { timeout: 5000 });
  return page;
}

/** Widgets have a transparent background; screenshots get a dark "scene" behind them. */
async function sceneShot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => document.documentElement.style.setProperty('background', '#2d3b4e'));
  await screenshot(page, name, { fullPage: false });
  await page.evaluate(() => document.documentElement.style.removeProperty('background'));
}

const displayed = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).OpenAlertsWidget.displayed.slice());
const skipped = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).OpenAlertsWidget.skipped.slice());

async function streamerWithVariations(types: Array<'donation' | 'custom' | 'merchandise-sale'>, durationMs = 1500): Promise<{ streamer: UserRow; token: string }> {
  const streamer = await w.newStreamer();
  for (const type of types) {
    const textTemplate = type === 'custom' ? '{header}' : type === 'donation' ? '{username} — {amount} {currency}' : '{username} bought {bought_amount} × merch';
    await createVariation(w.t.database.db, streamer.id, { type, name: type, minAmount: '0', durationMs: String(durationMs), layout: 'image-above-text', textTemplate, enabled: '1' });
  }
  return { streamer, token: await w.widgetToken(streamer.id) };
}

describe('pages in Chromium', { skip }, () => {
  before(async () => {
    w = await widgetWorld();
    base = await listen(w.t.app);
    chrome = await ChromiumPages.launch();
  });
  afterEach(() => chrome.closePages());
  after(async () => {
    await chrome?.close();
    await w?.close();
  });

  test('a donor donates on the donor page → the widget (another context) shows it (the time is logged, not asserted) → the API lists it shown', async () => {
    const { streamer, token } = await streamerWithVariations(['donation']);
    await createGoal(w.t.database.db, streamer.id, { title: 'New microphone', goalAmount: '100' });
    const widget = await openWidget('alerts', token);

    const donor = await newPage();
    await donor.setViewportSize({ width: 390, height: 844 }); // phone width
    await donor.goto(`${base}/r/${streamer.code}`);
    await donor.fill('input[name="username"]', 'Alice');
    await donor.fill('input[name="amount"]', '12.50');
    await donor.selectOption('select[name="currency"]', 'EUR');
    await donor.fill('textarea[name="message"]', 'Hello stream!');
    assert.equal(await donor.textContent('#message-count'), '13');
    assert.match(await donor.textContent('.payment') ?? '', /test \/ self-hosted/i);
    const overflow = await donor.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(overflow, false, 'no horizontal scrolling at phone width');
    await screenshot(donor, 'donor-page');

    const started = Date.now();
    await donor.click('form.donor-form button[type="submit"]');
    // The 1 s of the issue is measured and reported, not asserted: on a shared machine a timed
    // assertion fails for reasons unrelated to the code (DEVELOPERS: speed is for benchmarks).
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    const elapsed = Date.now() - started;
    await donor.waitForURL(/\/thanks\//);
    console.log(`# donor submit → alert visible in the widget: ${elapsed} ms`);
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Alice — 12.50 EUR');
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), 'Hello stream!');
    await sceneShot(widget, 'widget-alert-donation');
    assert.match(await donor.textContent('h1') ?? '', /Thank you/);
    await screenshot(donor, 'thanks-page');

    const apiToken = await issueToken(w.t, { userId: streamer.id, clientId: w.customClientId, scopes: ['oauth-donation-index'] });
    const listed = await until(async () => {
      const res = await fetch(`${base}/api/v1/alerts/donations`, { headers: { authorization: `Bearer ${apiToken}` } });
      const item = (await res.json()).data[0];
      return item?.is_shown === 1 ? item : null;
    }, 2000, 'is_shown 1 in the API');
    assert.equal(listed.username, 'Alice');
    assert.match(listed.shown_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.equal(listed.payin_system.title, 'Test payment');
  });

  test('custom alerts: never shown without a Custom-alerts variation, shown with one', async () => {
    const send = async (userId: number, header: string) => {
      const token = await issueToken(w.t, { userId, clientId: w.customClientId, scopes: ['oauth-custom_alert-store'] });
      const res = await fetch(`${base}/api/v1/custom_alert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ header, message: 'From an app' }).toString(),
      });
      assert.equal(res.status, 201);
      return (await res.json()).data;
    };
    const without = await streamerWithVariations(['donation']);
    const withCustom = await streamerWithVariations(['donation', 'custom']);
    const [widgetWithout, widgetWith] = await Promise.all([openWidget('alerts', without.token), openWidget('alerts', withCustom.token)]);

    const hidden = await send(without.streamer.id, 'Nobody sees this');
    const shown = await send(withCustom.streamer.id, 'Raid incoming!');
    const card = await widgetWith.waitForSelector('.alert.alert-custom.visible', { timeout: 3000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Raid incoming!');
    await sceneShot(widgetWith, 'widget-alert-custom');
    await until(async () => (await skipped(widgetWithout)).includes(`custom:${hidden.id}`), 3000, 'the alert to be skipped');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await widgetWithout.$('.alert'), null);
    assert.deepEqual(await displayed(widgetWithout), []);
    const rows = await w.t.database.db.selectFrom('custom_alerts').select(['id', 'is_shown', 'shown_at']).where('id', 'in', [hidden.id, shown.id]).orderBy('id').execute();
    await until(async () => (await w.t.database.db.selectFrom('custom_alerts').select('is_shown').where('id', '=', shown.id).executeTakeFirstOrThrow()).is_shown === 1, 2000, 'custom alert marked shown');
    assert.deepEqual(rows.find((r) => r.id === hidden.id), { id: hidden.id, is_shown: 0, shown_at: null });
  });

  test('a merchandise sale alert appears in the widget', async () => {
    const { streamer, token } = await streamerWithVariations(['merchandise-sale']);
    const widget = await openWidget('alerts', token);
    const sale = await w.sale(streamer.id, { username: 'Carol', bought_amount: '2' });
    const card = await widget.waitForSelector(`[data-alert="merchandise-sale:${sale.id}"].visible`, { timeout: 3000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Carol bought 2 × merch');
    await sceneShot(widget, 'widget-alert-sale');
    await until(async () => (await w.t.database.db.selectFrom('merchandise_sales').select('is_shown').where('id', '=', sale.id).executeTakeFirstOrThrow()).is_shown === 1, 2000, 'sale marked shown');
  });

  test('an XSS payload in the donor name and message renders as text; no script runs', async () => {
    const { streamer, token } = await streamerWithVariations(['donation']);
    const widget = await openWidget('alerts', token);
    const name = '<img src=x onerror="window.__xss=1">';
    const message = '<script>window.__xss=2</script><b>bold?</b>';
    const donor = await newPage();
    await donor.goto(`${base}/r/${streamer.code}`);
    await donor.fill('input[name="username"]', name);
    await donor.fill('input[name="amount"]', '3');
    await donor.fill('textarea[name="message"]', message);
    await donor.click('form.donor-form button[type="submit"]');
    await donor.waitForURL(/\/thanks\//);
    // The 1 s of the issue is measured and reported, not asserted: on a shared machine a timed
    // assertion fails for reasons unrelated to the code (DEVELOPERS: speed is for benchmarks).
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), `${name} — 3 USD`);
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), message);
    assert.equal(await card.$('img:not(.alert-image)'), null);
    assert.equal(await card.$('b'), null);
    assert.equal(await widget.evaluate(() => (window as any).__xss), undefined);
    assert.equal(await donor.evaluate(() => (window as any).__xss), undefined);
    assert.equal(await donor.textContent('.donor-message-text'), message);
    await sceneShot(widget, 'widget-alert-xss');
  });

  test('reconnect: a donation made while the socket is down shows exactly once after reconnecting', async () => {
    const { streamer, token } = await streamerWithVariations(['donation'], 1000);
    const widget = await openWidget('alerts', token);
    await widget.evaluate(() => {
      const win = window as any;
      win.__blockWs = true;
      for (const s of win.__sockets) s.close();
    });
    await widget.waitForFunction(() => document.body.getAttribute('data-state') !== 'live');
    const donation = await createDonation(w.t.database.db, { userId: streamer.id, username: 'Dana', amount: '4', currency: 'USD', message: 'while you were away' });
    // Published to the channel (and its history) while the widget is offline.
    await until(async () => {
      const rows = await eventsOnChannel(w.t.database.db, `$widget:alerts_${streamer.id}`);
      return rows.length > 0 && rows.every((r) => r.publishedAt !== null);
    }, 3000, 'the outbox to publish');
    assert.deepEqual(await displayed(widget), []);
    await widget.evaluate(() => { (window as any).__blockWs = false; });
    const key = `donation:${donation.id}`;
    await widget.waitForSelector(`[data-alert="${key}"].visible`, { timeout: 8000 });
    const recovery = await widget.evaluate(() => (window as any).OpenAlertsWidget.lastSubscribed);
    assert.deepEqual(recovery, { wasRecovering: true, recovered: true });
    // Let the catch-up list (which also holds it until it is marked shown) arrive and be ignored.
    await new Promise((r) => setTimeout(r, 1600));
    assert.deepEqual(await displayed(widget), [key]);
    const row = await w.t.database.db.selectFrom('donations').select(['is_shown']).where('id', '=', donation.id).executeTakeFirstOrThrow();
    assert.equal(row.is_shown, 1);
  });

  test('an alert that arrived while no widget was open shows when the widget opens', async () => {
    const { streamer, token } = await streamerWithVariations(['donation'], 1000);
    const donation = await createDonation(w.t.database.db, { userId: streamer.id, username: 'Early', amount: '1', currency: 'USD' });
    const widget = await openWidget('alerts', token);
    await widget.waitForSelector(`[data-alert="donation:${donation.id}"]`, { timeout: 3000 });
  });

  test('goal and poll widgets update live', async () => {
    const streamer = await w.newStreamer();
    const token = await w.widgetToken(streamer.id);
    await createGoal(w.t.database.db, streamer.id, { title: 'New camera', goalAmount: '200', startAmount: '20' });
    const poll = await createPoll(w.t.database.db, streamer.id, { title: 'Next game?', options: ['Chess', 'Go', 'Tetris'], allowUserOptions: 1 });
    const goalPage = await openWidget('goal', token);
    const pollPage = await openWidget('poll', token);
    assert.equal(await goalPage.textContent('.goal-title'), 'New camera');
    assert.equal(await goalPage.textContent('.goal-amounts'), '$20 / $200');

    await createDonation(w.t.database.db, { userId: streamer.id, amount: '80', currency: 'USD', pollOptionId: poll.options[1]!.id });
    await goalPage.waitForFunction(() => document.querySelector('.goal-amounts')?.textContent === '$100 / $200', undefined, { timeout: 3000 });
    assert.equal(await goalPage.getAttribute('.bar', 'aria-valuenow'), '50');
    await pollPage.waitForSelector(`.poll-option.winner[data-option="${poll.options[1]!.id}"]`, { timeout: 3000 });
    await createDonation(w.t.database.db, { userId: streamer.id, amount: '5', currency: 'USD', pollOptionTitle: 'Doom' });
    await pollPage.waitForFunction(() => document.querySelectorAll('.poll-option').length === 4, undefined, { timeout: 3000 });
    await createDonation(w.t.database.db, { userId: streamer.id, amount: '5', currency: 'USD', pollOptionId: poll.options[1]!.id });
    await pollPage.waitForFunction(() => /2 donations · 67%/.test(document.querySelector('.poll-option.winner .poll-option-value')?.textContent ?? ''), undefined, { timeout: 3000 });
    await sceneShot(goalPage, 'widget-goal');
    await sceneShot(pollPage, 'widget-poll');
  });

  test('widget settings: URLs, a variation made in the form, and "Send test alert" reaching the open widget', async () => {
    const streamer = await w.newStreamer();
    const page = await newPage();
    await page.goto(`${base}/login`);
    await page.fill('input[name="email"]', streamer.email);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(/\/dashboard/), page.click('main button[type="submit"]')]);
    await page.goto(`${base}/dashboard/widgets`);
    const alertsUrl = await page.inputValue('#url-alerts');
    const token = new URL(alertsUrl).searchParams.get('token')!;
    assert.equal(token, await w.widgetToken(streamer.id));

    await page.click('a[href="/dashboard/widgets/variations/new?type=donation"]');
    await page.fill('input[name="name"]', 'Everyone');
    await page.fill('input[name="duration_ms"]', '1200');
    await page.click('.variation-form button[type="submit"]');
    await page.waitForURL(/done=created/);
    const widget = await openWidget('alerts', token);
    await page.click('form[action$="/test"] button');
    await page.waitForURL(/done=test/);
    // The 1 s of the issue is measured and reported, not asserted: on a shared machine a timed
    // assertion fails for reasons unrelated to the code (DEVELOPERS: speed is for benchmarks).
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.match(await card.$eval('.alert-title', (el) => el.textContent ?? ''), /^Test donor — /);
    await screenshot(page, 'widget-settings');

    // Regenerating: the old URL is dead at once; the open widget stops at its next token check
    // (every minute; run one now) and closes its socket.
    page.once('dialog', (d) => void d.accept());
    await page.click('form[action="/dashboard/widgets/token"] button');
    await page.waitForURL(/done=token/);
    const stale = await newPage();
    assert.equal((await stale.goto(`${base}/widget/alerts?token=${token}`))?.status(), 404);
    await widget.evaluate(() => (window as any).OpenAlertsWidget.api('token').catch(() => {}));
    await widget.waitForSelector('body[data-state="revoked"]', { timeout: 3000 });
    await widget.waitForFunction(() => (window as any).__sockets.every((s: WebSocket) => s.readyState === WebSocket.CLOSED), undefined, { timeout: 3000 });
  });

  test('no page breaks the Content-Security-Policy (every page an administrator can reach, the widgets, /docs)', async () => {
    const admin = await w.t.database.db.selectFrom('users').selectAll().where('role', '=', 'admin').orderBy('id').executeTakeFirstOrThrow();
    const token = await w.widgetToken(admin.id);
    const page = await newPage();
    const seen = watchProblems(page);
    await page.goto(`${base}/login`);
    await page.fill('input[name="email"]', admin.email);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(/\/dashboard/), page.click('main button[type="submit"]')]);
    const queue = ['/dashboard', '/dashboard/widgets', `/r/${admin.code}`, '/docs', `/widget/alerts?token=${token}`, `/widget/goal?token=${token}`, `/widget/poll?token=${token}`];
    const visited = new Set<string>();
    while (queue.length && visited.size < 40) {
      const path = queue.shift()!;
      if (visited.has(path)) continue;
      visited.add(path);
      const res = await page.goto(`${base}${path}`);
      assert.ok(res && res.status() < 500, `${path}: ${res?.status()}`);
      // Swagger UI renders from /openapi.json; both load their packages on the first request (start-up
      // stays lean), which on a loaded CI machine takes seconds: a loose bound, not a speed check.
      if (path === '/docs') await page.waitForSelector('.swagger-ui .info', { timeout: 30_000 });
      else await page.waitForLoadState('load');
      const links = await page.$$eval('a[href^="/"]', (as) => as.map((a) => a.getAttribute('href')!));
      for (const href of links) if (!href.startsWith('//') && !href.includes('logout') && !visited.has(href)) queue.push(href);
    }
    assert.ok(visited.size >= 7);
    assert.deepEqual(seen, [], `CSP violations or errors on: ${[...visited].join(', ')}`);
  });

  test('no uncaught errors or CSP violations on any page of these tests', () => {
    assert.deepEqual(chrome.problems(), []);
  });
});
