import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import en_US from '../../src/i18n/catalogs/en_US.js';
import ru_RU from '../../src/i18n/catalogs/ru_RU.js';
import { BrowserSession } from '../browser-session.js';
import { streamer } from '../dashboard/helpers.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';

/**
 * Pages say what services refused in the page's language: inline field errors, a form's notice
 * and the HTML error page — while the API says the same codes in English.
 */
describe('service errors on pages, in the page’s language', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('profile form of a ru_RU streamer: a taken name, with the field named in Russian', async () => {
    const taken = await makeUser(t.database.db, { name: 'Занятое Имя' });
    const { browser } = await streamer(t, { language: 'ru_RU', currency: 'RUB' });
    await browser.get('/dashboard/profile');
    const res = await browser.postForm('/dashboard/profile', { name: taken.name, avatar: '', language: 'ru_RU', currency: 'RUB' });
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /Значение «имя» уже занято\./);
    assert.doesNotMatch(res.body, /has already been taken/);
  });

  test('sign-up with Accept-Language ru: password and e-mail errors in Russian', async () => {
    const browser = new BrowserSession(t.app);
    await browser.get('/signup', { 'accept-language': 'ru-RU' });
    const res = await browser.request({
      method: 'POST', url: '/signup',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'accept-language': 'ru-RU' },
      payload: new URLSearchParams({ _csrf: browser.lastCsrf!, email: 'not-an-address', name: 'Новый Стример', password: 'short' }).toString(),
    });
    assert.equal(res.statusCode, 422);
    assert.ok(res.body.includes(ru_RU['err.account.email_invalid']), 'e-mail');
    assert.match(res.body, /Пароль — не короче 8 символов\./);
    assert.ok(!res.body.includes(en_US['err.account.email_invalid']));
  });

  test('alert variation form: field labels and numbers the Russian way (ICU number arguments)', async () => {
    const { browser } = await streamer(t, { language: 'ru_RU', currency: 'RUB' });
    await browser.get('/dashboard/widgets/variations/new?type=donation');
    const res = await browser.postForm('/dashboard/widgets/variations', {
      type: 'donation', name: 'Большой', min_amount: 'десять', duration_ms: '50', layout: 'text-only', text_template: '{username}', enabled: '1',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /В поле «длительность \(мс\)» нужно целое число от 1\u00a0000 до 60\u00a0000\./);
    assert.match(res.body, /В поле «минимальная сумма» нужно положительное число, например 10 или 10,50\./);
    assert.doesNotMatch(res.body, /whole number|positive number/);
  });

  test('an error page: the service’s message in Russian, in English for the API', async () => {
    const { browser } = await streamer(t, { language: 'ru_RU' });
    await browser.get('/dashboard/webhooks');
    const page = await browser.postForm('/dashboard/webhooks/999999/remove', { _csrf: browser.lastCsrf! });
    assert.equal(page.statusCode, 404);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.ok(page.body.includes(ru_RU['err.webhook.not_found']), page.body);
    assert.ok(!page.body.includes(en_US['err.webhook.not_found']));
    // A script asking for JSON gets the API's English.
    const asJson = await browser.request({
      method: 'POST', url: '/dashboard/webhooks/999999/remove',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      payload: new URLSearchParams({ _csrf: browser.lastCsrf! }).toString(),
    });
    assert.equal(asJson.statusCode, 404);
    assert.deepEqual(asJson.json(), { message: 'This webhook subscription does not exist.' });
  });
});
