import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { createPoll } from '../../src/modules/polls/polls.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { buildTestApp, listen, makeUser, type TestApp } from '../helper.js';
import { englishFragments, escapeRegExp, SHARED, visibleText } from './catalog-text.js';
import { chromiumMissing, ChromiumPages, screenshot } from './chromium.js';

/**
 * Languages in real Chromium: the dashboard of a ru_RU streamer shows none of the English catalog's
 * text, the donor page switches language, a ru_RU streamer's widget shows the Russian alert
 * template whatever the OBS machine's language, and he_HE pages are laid out right to left.
 */
const skip = chromiumMissing();
const PASSWORD = 'correct horse battery';

/** The dashboard pages whose every string comes from the catalog. */
const MAIN_PAGES = ['/dashboard', '/dashboard/donations', '/dashboard/goals', '/dashboard/polls', '/dashboard/widgets', '/dashboard/merchandise', '/dashboard/apps', '/dashboard/authorized-apps', '/dashboard/profile', '/dashboard/payments', '/dashboard/moderation', '/dashboard/webhooks', '/admin/users', '/admin/merchants', '/admin/rates'];

let t: TestApp;
let base: string;
let chrome: ChromiumPages;

before(async () => {
  if (skip) return;
  t = await buildTestApp();
  base = await listen(t.app);
  chrome = await ChromiumPages.launch();
});

afterEach(() => chrome?.closePages());

after(async () => {
  await chrome?.close();
  await t?.close();
});

/** A browser whose own language is English, as an OBS machine or a donor's browser might be. */
function newPage(viewport = { width: 1100, height: 900 }): Promise<Page> {
  return chrome.newPage({ viewport, locale: 'en-US' });
}

async function logIn(page: Page, email: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('main button[type="submit"]')]);
}

describe('languages in Chromium', { skip }, () => {
  test('the dashboard (and admin pages) of a ru_RU administrator show no English catalog text', { timeout: 120_000 }, async () => {
    const user = await makeUser(t.database.db, { name: 'Стример Тест', language: 'ru_RU', currency: 'RUB', admin: true });
    await createDonation(t.database.db, { userId: user.id, username: 'Вася', amount: '1234.5', currency: 'RUB', message: 'Привет!' });
    await createDonation(t.database.db, { userId: user.id, username: 'Петя', amount: '5', currency: 'EUR' });
    await createGoal(t.database.db, user.id, { title: 'Новый микрофон', goalAmount: '5000' });
    await createPoll(t.database.db, user.id, { title: 'Во что играем?', options: ['Шахматы', 'Го'], allowUserOptions: 1 });
    const page = await newPage();
    await logIn(page, user.email);
    const fragments = englishFragments();
    assert.ok(fragments.length > 200, `the check has the catalog's English text to look for (${fragments.length})`);
    const patterns = fragments.map((f) => ({ f, re: new RegExp(`(?<![\\p{L}])${escapeRegExp(f)}(?![\\p{L}])`, 'u') }));
    for (const path of MAIN_PAGES) {
      await page.goto(`${base}${path}`);
      await page.waitForLoadState('load');
      assert.equal(await page.getAttribute('html', 'lang'), 'ru-RU', path);
      if (path === '/dashboard' || path === '/dashboard/goals' || path === '/dashboard/polls') {
        await page.waitForSelector('#live-status[data-state="connected"]', { timeout: 5000 });
      }
      // Text both catalogs share (proper names such as "Merchandise API") is not English-only.
      // Template placeholders ({username}, {bought_amount}) are syntax the streamer types, not English text.
      const text = SHARED.reduce((acc, shared) => acc.split(shared).join(' '), (await visibleText(page)).replace(/\{[a-z_]+\}/g, ' '));
      const english = patterns.filter(({ re }) => re.test(text)).map(({ f }) => f);
      assert.deepEqual(english, [], `${path} shows English: ${english.join(' | ')}`);
      await screenshot(page, `i18n-ru${path.replace(/\//g, '-')}`);
    }
    // Money, plurals and relative times in Russian.
    await page.goto(`${base}/dashboard`);
    const overview = await visibleText(page);
    assert.match(overview, /1\u00a0234,50\u00a0₽/);
    assert.match(overview, /2 доната/);
    assert.match(overview, /(секунд[уы]?|минут[уы]?) назад|сейчас/); // «3 секунды назад», «1 минуту назад»
    assert.deepEqual(chrome.problems(), []);
  });

  test('the donor page follows the browser, then switches language', { timeout: 60_000 }, async () => {
    const streamer = await makeUser(t.database.db, { currency: 'RUB' });
    const page = await newPage({ width: 390, height: 844 });
    await page.goto(`${base}/r/${streamer.code}`);
    assert.equal(await page.getAttribute('html', 'lang'), 'en-US');
    assert.match((await page.textContent('h1')) ?? '', /^Support /);
    await Promise.all([page.waitForURL(/lang=ru_RU/), page.selectOption('select[name="lang"]', 'ru_RU')]);
    assert.equal(await page.getAttribute('html', 'lang'), 'ru-RU');
    assert.match((await page.textContent('h1')) ?? '', /^Поддержать /);
    assert.equal(await page.textContent('form.donor-form button[type="submit"]'), 'Задонатить');
    // The choice is remembered.
    await page.goto(`${base}/r/${streamer.code}`);
    assert.equal(await page.getAttribute('html', 'lang'), 'ru-RU');
    // A donation made in Russian thanks in Russian, with the amount as Russians write it.
    await page.fill('input[name="username"]', 'Вася');
    await page.fill('input[name="amount"]', '1234,5');
    await page.selectOption('select[name="currency"]', 'RUB');
    await Promise.all([page.waitForURL(/\/thanks\//), page.click('form.donor-form button[type="submit"]')]);
    assert.equal(await page.textContent('h1'), 'Спасибо!');
    assert.match((await page.textContent('main p')) ?? '', /1\u00a0234,50\u00a0₽/);
    await screenshot(page, 'i18n-donor-ru-thanks');
  });

  test('a widget of a ru_RU streamer shows the Russian alert template on an English OBS machine', { timeout: 60_000 }, async () => {
    const user = await makeUser(t.database.db, { language: 'ru_RU', currency: 'RUB' });
    const dashboard = await newPage();
    await logIn(dashboard, user.email);
    await dashboard.goto(`${base}/dashboard/widgets/variations/new?type=donation`);
    assert.equal(await dashboard.inputValue('input[name="text_template"]'), '{username} донатит {money}!');
    await Promise.all([dashboard.waitForURL(/done=created/), dashboard.click('.variation-form button[type="submit"]')]);

    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, user.id);
    const widget = await newPage({ width: 900, height: 400 });
    await widget.goto(`${base}/widget/alerts?token=${encodeURIComponent(token)}`);
    await widget.waitForSelector('body[data-state="live"]', { timeout: 5000 });
    assert.equal(await widget.getAttribute('html', 'lang'), 'ru-RU');
    await createDonation(t.database.db, { userId: user.id, username: '', amount: '1234.5', currency: 'RUB' });
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'Аноним донатит 1\u00a0234,50\u00a0₽!');
    await widget.evaluate(() => document.documentElement.style.setProperty('background', '#2d3b4e'));
    await screenshot(widget, 'i18n-widget-ru-alert', { fullPage: false });
  });

  test('he_HE: the donor page and the widgets are laid out right to left', { timeout: 60_000 }, async () => {
    const streamer = await makeUser(t.database.db, { language: 'he_HE', currency: 'USD' });
    await createGoal(t.database.db, streamer.id, { title: 'מיקרופון חדש', goalAmount: '100' });
    const geometry = async (lang: string) => {
      const page = await newPage({ width: 800, height: 900 });
      await page.goto(`${base}/r/${streamer.code}?lang=${lang}`);
      const box = async (selector: string) => (await page.locator(selector).first().boundingBox())!;
      const result = { dir: await page.getAttribute('html', 'dir'), avatar: await box('.donor-avatar'), heading: await box('.donor-head h1'), amount: await box('input[name="amount"]'), currency: await box('select[name="currency"]'), counter: await box('.counter'), card: await box('.card.donor') };
      await screenshot(page, `i18n-donor-${lang}`);
      return result;
    };
    const ltr = await geometry('en_US');
    const rtl = await geometry('he_HE');
    assert.equal(ltr.dir, 'ltr');
    assert.equal(rtl.dir, 'rtl');
    // Left to right: avatar before the heading, amount before currency; right to left: mirrored.
    assert.ok(ltr.avatar.x < ltr.heading.x && rtl.avatar.x > rtl.heading.x, 'the avatar moves to the right of the heading');
    assert.ok(ltr.amount.x < ltr.currency.x && rtl.amount.x > rtl.currency.x, 'amount and currency swap sides');
    // The avatar sits at the card's start edge: left in English, right in Hebrew, at the same inset.
    const ltrInset = ltr.avatar.x - ltr.card.x;
    const rtlInset = rtl.card.x + rtl.card.width - (rtl.avatar.x + rtl.avatar.width);
    assert.ok(Math.abs(ltrInset - rtlInset) <= 2, `mirrored insets ${ltrInset} / ${rtlInset}`);

    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, streamer.id);
    const widget = await newPage({ width: 900, height: 300 });
    await widget.goto(`${base}/widget/goal?token=${encodeURIComponent(token)}`);
    await widget.waitForSelector('body[data-state="live"]', { timeout: 5000 });
    assert.equal(await widget.getAttribute('html', 'dir'), 'rtl');
    await createDonation(t.database.db, { userId: streamer.id, amount: '40', currency: 'USD' });
    await widget.waitForFunction(() => (document.querySelector('.bar') as HTMLElement | null)?.getAttribute('aria-valuenow') === '40', undefined, { timeout: 5000 });
    const bar = (await widget.locator('.bar').boundingBox())!;
    await widget.waitForTimeout(700); // the fill's width transition
    const fill = (await widget.locator('.bar-fill').boundingBox())!;
    assert.ok(Math.abs(fill.x + fill.width - (bar.x + bar.width)) <= 1, 'the progress fills from the right');
    assert.ok(fill.x > bar.x + bar.width / 2, 'a 40% fill stays on the right half');
    await widget.evaluate(() => document.documentElement.style.setProperty('background', '#2d3b4e'));
    await screenshot(widget, 'i18n-widget-he-goal', { fullPage: false });
    assert.deepEqual(chrome.problems(), []);
  });
});
