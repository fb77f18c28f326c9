import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { MAX_ACTIVE_GOALS } from '../../src/domain/goal.js';
import ru_RU from '../../src/i18n/catalogs/ru_RU.js';
import { translator } from '../../src/i18n/translator.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { closePoll, createPoll } from '../../src/modules/polls/polls.service.js';
import { buildTestApp, listen, makeUser, type TestApp } from '../helper.js';
import { englishShown, visibleText } from './catalog-text.js';
import { chromiumMissing, ChromiumPages, screenshot } from './chromium.js';

/**
 * Errors made by services, in real Chromium: a ru_RU streamer's dashboard forms and a Russian
 * donor's page say them in Russian — the same codes the API answers in English — and show none
 * of the English catalog's text.
 */
const skip = chromiumMissing();
const PASSWORD = 'correct horse battery';
const ru = await translator('ru_RU');

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

/** A browser whose own language is `locale` (its Accept-Language). */
function newPage(locale: string, viewport = { width: 1100, height: 900 }): Promise<Page> {
  return chrome.newPage({ viewport, locale });
}

async function logIn(page: Page, email: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('main button[type="submit"]')]);
}

/** Submits the form a selector is in and waits for the answer (a re-rendered form: 4xx). */
async function submit(page: Page, button: string): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click(button)]);
  await page.waitForLoadState('load');
  return response.status();
}

async function assertRussianOnly(page: Page, what: string): Promise<void> {
  assert.equal(await page.getAttribute('html', 'lang'), 'ru-RU', what);
  assert.deepEqual(await englishShown(page), [], `${what} shows English`);
}

describe('service errors in the page’s language (Chromium)', { skip }, () => {
  test('a ru_RU streamer: goal and poll forms say service errors in Russian', { timeout: 120_000 }, async () => {
    const user = await makeUser(t.database.db, { name: 'Стример Ошибок', language: 'ru_RU', currency: 'RUB' });
    const page = await newPage('en-US');
    await logIn(page, user.email);

    // An amount the goal service refuses (three decimals): the field's message, in Russian.
    await page.goto(`${base}/dashboard/goals`);
    const start = 'form[action="/dashboard/goals"]';
    await page.fill(`${start} input[name="title"]`, 'Новый микрофон');
    await page.fill(`${start} input[name="goal_amount"]`, '10,999');
    assert.equal(await submit(page, `${start} button[type="submit"]`), 422);
    let text = await visibleText(page);
    assert.ok(text.includes('В поле «нужная сумма» не больше двух знаков после запятой.'), text);
    assert.doesNotMatch(text, /decimal places/);
    await assertRussianOnly(page, 'goal amount error');
    await screenshot(page, 'errors-ru-goal-amount');

    // A conflict: every goal slot taken.
    for (let i = 0; i < MAX_ACTIVE_GOALS; i++) await createGoal(t.database.db, user.id, { title: `Цель ${i + 1}`, goalAmount: '100' });
    await page.goto(`${base}/dashboard/goals`);
    await page.fill(`${start} input[name="title"]`, 'Ещё одна');
    await page.fill(`${start} input[name="goal_amount"]`, '500');
    assert.equal(await submit(page, `${start} button[type="submit"]`), 409);
    text = await visibleText(page);
    assert.ok(text.includes(`У вас уже ${MAX_ACTIVE_GOALS} активных целей — завершите одну, прежде чем начинать новую.`), text);
    await assertRussianOnly(page, 'goal conflict');
    await screenshot(page, 'errors-ru-goal-conflict');

    // The poll service: an option listed twice, then a second poll while one runs.
    await page.goto(`${base}/dashboard/polls`);
    await page.fill('input[name="title"]', 'Во что играем?');
    await page.fill('textarea[name="options"]', 'Шахматы\nшахматы');
    assert.equal(await submit(page, 'form[action="/dashboard/polls"] button[type="submit"]'), 422);
    text = await visibleText(page);
    assert.ok(text.includes('Вариант «шахматы» указан дважды.'), text);
    await assertRussianOnly(page, 'poll option twice');
    // Meanwhile a poll was started elsewhere (another tab, the API): this one conflicts.
    await createPoll(t.database.db, user.id, { title: 'Уже идёт', options: ['Да', 'Нет'] });
    await page.fill('textarea[name="options"]', 'Шахматы\nГо');
    assert.equal(await submit(page, 'form[action="/dashboard/polls"] button[type="submit"]'), 409);
    text = await visibleText(page);
    assert.ok(text.includes(ru_RU['err.poll.already_running']), text);
    await assertRussianOnly(page, 'poll conflict');
    await screenshot(page, 'errors-ru-poll-conflict');
    assert.deepEqual(chrome.problems(), []);
  });

  test('a Russian donor: the limits up front, then amount, message and vote errors in Russian', { timeout: 120_000 }, async () => {
    const streamer = await makeUser(t.database.db, { name: 'Стример Донатов', currency: 'RUB' });
    await saveModerationSettings(t.database.db, streamer.id, { ...DEFAULT_SETTINGS, maxMessageLength: 40, minMessageAmount: 10_000 });
    const poll = await createPoll(t.database.db, streamer.id, { title: 'Что дальше?', options: ['Шахматы', 'Го'] });
    const page = await newPage('ru-RU', { width: 420, height: 900 });
    await page.goto(`${base}/r/${streamer.code}`);
    assert.equal(await page.getAttribute('html', 'lang'), 'ru-RU', 'Accept-Language: ru-RU');

    // The streamer's limits, before anything is typed.
    assert.equal(await page.getAttribute('textarea[name="message"]', 'maxlength'), '40');
    const hint = (await page.textContent('.donor-limits')) ?? '';
    assert.ok(hint.includes(ru.t('donor.limit.message_max', { name: streamer.name, max: 40 })), hint);
    assert.ok(hint.includes(ru.t('donor.limit.min_message_amount', { amount: ru.money(10_000, 'RUB') })), hint);
    assert.match(hint, /100,00\u00a0₽/);
    await page.fill('textarea[name="message"]', 'Привет');
    assert.equal(await page.textContent('#message-count'), '6');
    await assertRussianOnly(page, 'donor page');
    await screenshot(page, 'errors-ru-donor-limits');

    // An amount with three decimals.
    await page.fill('input[name="amount"]', '10,999');
    assert.equal(await submit(page, 'form.donor-form button[type="submit"]'), 422);
    assert.ok((await visibleText(page)).includes(ru_RU['donor.error.amount_decimals']));
    await assertRussianOnly(page, 'donor amount error');
    await screenshot(page, 'errors-ru-donor-amount');

    // A message longer than the streamer allows (past the browser's maxlength: a script or an old page).
    await page.fill('input[name="amount"]', '150');
    await page.evaluate(() => document.querySelector('textarea[name="message"]')!.removeAttribute('maxlength'));
    await page.fill('textarea[name="message"]', 'Очень длинное сообщение, которое стример не покажет целиком');
    assert.equal(await submit(page, 'form.donor-form button[type="submit"]'), 422);
    assert.ok((await visibleText(page)).includes(ru.t('moderation.donor.too_long', { max: 40 })));
    await assertRussianOnly(page, 'donor message error');

    // The donation service refuses the vote: the poll closed while the donor was choosing.
    await page.fill('textarea[name="message"]', 'Го!');
    await page.check(`input[name="poll_option"][value="${poll.options[1]!.id}"]`);
    await closePoll(t.database.db, poll.id, { userId: streamer.id });
    assert.equal(await submit(page, 'form.donor-form button[type="submit"]'), 422);
    const text = await visibleText(page);
    assert.ok(text.includes(ru_RU['err.poll.none_active']), text);
    assert.doesNotMatch(text, /no active poll/);
    await assertRussianOnly(page, 'donor vote error');
    await screenshot(page, 'errors-ru-donor-vote');
    assert.deepEqual(chrome.problems(), []);
  });
});
