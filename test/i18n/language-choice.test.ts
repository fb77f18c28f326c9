import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import en_US from '../../src/i18n/catalogs/en_US.js';
import { localeFromAcceptLanguage } from '../../src/i18n/negotiate.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { createVariation } from '../../src/modules/widgets/variations.service.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t?.close();
});

const htmlLang = (body: string) => /<html lang="([^"]+)" dir="([^"]+)"/.exec(body)?.slice(1, 3);
const KEY_PATTERN = new RegExp(`(?:${Object.keys(en_US).map((k) => k.replace(/\./g, '\\.')).join('|')})(?![\\w.])`);

describe('choosing the language', () => {
  test('Accept-Language: q-values, regional variants and nearby languages', () => {
    assert.equal(localeFromAcceptLanguage('ru-RU,ru;q=0.9,en-US;q=0.8'), 'ru_RU');
    assert.equal(localeFromAcceptLanguage('en;q=0.5, uk;q=0.9'), 'uk_UA');
    assert.equal(localeFromAcceptLanguage('ru-UA'), 'ru_RU');
    assert.equal(localeFromAcceptLanguage('es-MX'), 'es_US');
    assert.equal(localeFromAcceptLanguage('he-IL'), 'he_HE');
    assert.equal(localeFromAcceptLanguage('pt'), 'pt_BR');
    assert.equal(localeFromAcceptLanguage('de;q=0, fr'), 'fr_FR');
  });

  test('hostile or unknown Accept-Language falls back to English without an error', () => {
    for (const header of ['', '*', 'xx-YY', 'tlh', '<script>alert(1)</script>', ';;;,,,q=abc', 'ru;q=NaN', `${'a'.repeat(5000)}`, Array.from({ length: 500 }, (_, i) => `x${i};q=0.${i % 9}`).join(','), '\u0000ru', 'ru_RU\r\nSet-Cookie: x=1']) {
      const locale = localeFromAcceptLanguage(header);
      assert.ok(locale === 'en_US' || locale === 'ru_RU', `${JSON.stringify(header.slice(0, 40))} → ${locale}`);
    }
    assert.equal(localeFromAcceptLanguage('<script>'), 'en_US');
    assert.equal(localeFromAcceptLanguage(undefined), 'en_US');
  });

  test('donor page: Accept-Language, then the switcher (?lang=, remembered in a cookie)', async () => {
    const streamer = await makeUser(t.database.db, { currency: 'RUB' });
    const donor = new BrowserSession(t.app);
    let res = await donor.get(`/r/${streamer.code}`, { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(htmlLang(res.body), ['ru-RU', 'ltr']);
    assert.match(res.body, /<h1>Поддержать /);
    assert.match(res.body, /Задонатить/);
    assert.match(res.body, /<option value="de_DE" lang="de-DE">Deutsch<\/option>/);

    res = await donor.get(`/r/${streamer.code}?lang=de_DE`, { 'accept-language': 'ru-RU' });
    assert.deepEqual(htmlLang(res.body), ['de-DE', 'ltr']);
    assert.match(res.body, /<h1>[^<]* unterstützen<\/h1>/);
    assert.match(String(res.headers['set-cookie']), /oa_lang=de_DE/);
    // The cookie outranks Accept-Language from now on.
    res = await donor.get(`/r/${streamer.code}`, { 'accept-language': 'ru-RU' });
    assert.deepEqual(htmlLang(res.body), ['de-DE', 'ltr']);

    res = await donor.get(`/r/${streamer.code}?lang=he_HE`);
    assert.deepEqual(htmlLang(res.body), ['he-HE', 'rtl']);
  });

  test('a malformed lang query or cookie is ignored: no error, English or the browser language', async () => {
    const streamer = await makeUser(t.database.db);
    for (const lang of ['xx_XX', '<b>', '../../etc', 'ru_RU%00', 'EN_us', '']) {
      const res = await t.app.inject({ method: 'GET', url: `/r/${streamer.code}?lang=${encodeURIComponent(lang)}`, headers: { accept: 'text/html', cookie: 'oa_lang=%3Cscript%3E' } });
      assert.equal(res.statusCode, 200, lang);
      assert.deepEqual(htmlLang(res.body), ['en-US', 'ltr'], lang);
      assert.equal(res.headers['set-cookie'] === undefined || !String(res.headers['set-cookie']).includes('oa_lang'), true, lang);
    }
    const array = await t.app.inject({ method: 'GET', url: `/r/${streamer.code}?lang=ru_RU&lang=de_DE`, headers: { accept: 'text/html' } });
    assert.equal(array.statusCode, 200);
  });

  test('a form posted in one language answers in it, even without cookies', async () => {
    const streamer = await makeUser(t.database.db);
    const donor = new BrowserSession(t.app);
    await donor.get(`/r/${streamer.code}`);
    const res = await donor.postForm(`/r/${streamer.code}`, { amount: 'abc', currency: 'USD', lang: 'ru_RU' });
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /Сумма должна быть положительным числом|Введите сумму числом/);
    const bad = await donor.postForm(`/r/${streamer.code}`, { amount: '', currency: 'USD', lang: 'zz_ZZ' });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /Enter an amount\./);
  });

  test('the thank-you page shows the amount with the currency of the donor’s locale', async () => {
    const streamer = await makeUser(t.database.db);
    const donor = new BrowserSession(t.app);
    await donor.get(`/r/${streamer.code}?lang=ru_RU`);
    const res = await donor.postForm(`/r/${streamer.code}`, { amount: '1234.5', currency: 'RUB', username: 'Вася', lang: 'ru_RU' });
    assert.equal(res.statusCode, 303);
    const thanks = await donor.get(String(res.headers.location));
    assert.match(thanks.body, /Ваш донат <strong>1\u00a0234,50\u00a0₽<\/strong>/);
  });

  test('unknown donor link: the 404 page in the visitor’s language', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/r/nobody-here', headers: { accept: 'text/html', 'accept-language': 'uk' } });
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /Стримера з таким посиланням для донатів не існує/);
  });

  test('widgets speak the streamer’s language whatever OBS sends', async () => {
    const streamer = await makeUser(t.database.db, { language: 'ru_RU', currency: 'RUB' });
    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, streamer.id);
    const res = await t.app.inject({ method: 'GET', url: `/widget/alerts?token=${encodeURIComponent(token)}`, headers: { accept: 'text/html', 'accept-language': 'en-US' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(htmlLang(res.body), ['ru-RU', 'ltr']);
    const data = JSON.parse(/<script type="application\/json" id="i18n-data">([^<]*)<\/script>/.exec(res.body)![1]!);
    assert.equal(data.locale, 'ru-RU');
    assert.equal(data.messages['widget.anonymous'], 'Аноним');
    assert.ok(!('nav.overview' in data.messages), 'only the widget namespace is sent');
  });

  test('a profile language that is not a spec locale reads as English (no error)', async () => {
    const streamer = await makeUser(t.database.db);
    await t.database.db.updateTable('users').set({ language: 'xx_XX' }).where('id', '=', streamer.id).execute();
    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, streamer.id);
    await createVariation(t.database.db, streamer.id, { type: 'donation', name: 'D', minAmount: '0', durationMs: '3000', layout: 'text-only', textTemplate: '{username}', enabled: '1' });
    const res = await t.app.inject({ method: 'GET', url: `/widget/goal?token=${encodeURIComponent(token)}`, headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(htmlLang(res.body), ['en-US', 'ltr']);
  });

  test('no page renders a raw catalog key', async () => {
    const streamer = await makeUser(t.database.db);
    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, streamer.id);
    for (const lang of ['en_US', 'ru_RU', 'de_DE', 'he_HE', 'zh_CN']) {
      for (const url of [`/r/${streamer.code}?lang=${lang}`, `/r/nobody?lang=${lang}`, '/', '/login', '/signup', '/nowhere']) {
        const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html', 'accept-language': lang.replace('_', '-') } });
        assert.doesNotMatch(res.body, KEY_PATTERN, `${url} (${lang})`);
      }
    }
    const widget = await t.app.inject({ method: 'GET', url: `/widget/poll?token=${encodeURIComponent(token)}`, headers: { accept: 'text/html' } });
    // The widget page carries its messages as data keyed by catalog keys; its visible text has none.
    assert.doesNotMatch(widget.body.replace(/<script type="application\/json"[\s\S]*?<\/script>/g, ''), KEY_PATTERN);
  });
});
