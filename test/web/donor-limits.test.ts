import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_SETTINGS, saveModerationSettings, type ModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { DONATION_LIMITS } from '../../src/modules/donations/donations.service.js';
import { buildTestApp, makeUser, type TestApp } from '../helper.js';

/**
 * The donor form shows the streamer's moderation limits before the donor types: the longest
 * message (maxlength, counter and a translated hint) and the smallest amount that shows a message.
 */
describe('donor page: the streamer’s message limits up front', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const streamerWith = async (rules: Partial<ModerationSettings>) => {
    const user = await makeUser(t.database.db, { currency: 'RUB' });
    await saveModerationSettings(t.database.db, user.id, { ...DEFAULT_SETTINGS, ...rules });
    return user;
  };
  const page = async (code: string, acceptLanguage: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/r/${code}`, headers: { 'accept-language': acceptLanguage } });
    assert.equal(res.statusCode, 200);
    return res.body;
  };
  const textarea = (body: string) => /<textarea id="donor-message"[^>]*>/.exec(body)![0];

  test('a streamer’s shorter limit and minimum amount, in Russian for a Russian browser', async () => {
    const user = await streamerWith({ maxMessageLength: 80, minMessageAmount: 15_000 });
    const body = await page(user.code, 'ru-RU,ru;q=0.9,en;q=0.5');
    assert.match(textarea(body), /maxlength="80"/);
    assert.match(body, /из 80 символов/, 'the counter counts to the streamer’s limit');
    assert.match(body, /[^<]+ показывает сообщения не длиннее 80 символов\./);
    assert.match(body, /Сообщение попадёт на стрим при донате от 150,00\u00a0₽/);
    const en = await page(user.code, 'en-US');
    assert.match(en, /Messages to [^<]+ can be up to 80 characters long\./);
    assert.match(en, /Your message appears on stream with donations of RUB\u00a0150\.00 or more/);
  });

  test('no messages at all when the streamer’s limit is 0', async () => {
    const user = await streamerWith({ maxMessageLength: 0 });
    const body = await page(user.code, 'ru');
    assert.match(textarea(body), /maxlength="0"/);
    assert.match(body, /не показывает сообщения на стриме/);
  });

  test('without rules: the service’s own limit and no hint', async () => {
    const user = await makeUser(t.database.db);
    const body = await page(user.code, 'en');
    assert.match(textarea(body), new RegExp(`maxlength="${DONATION_LIMITS.message}"`));
    assert.doesNotMatch(body, /donor-limits/);
  });
});
