import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { DEFAULT_SETTINGS, saveModerationSettings, type ModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { BrowserSession } from '../browser-session.js';
import { buildTestApp, makeUser, REDIS_URL, redisAvailable, testConfig, type TestApp } from '../helper.js';

/** A donor's browser on one streamer's page, posting from `address`. */
async function donorOn(app: FastifyInstance, code: string, lang = 'en_US') {
  const browser = new BrowserSession(app);
  await browser.get(`/r/${code}?lang=${lang}`);
  return (fields: Record<string, string>, address = '127.0.0.1') =>
    browser.request({
      method: 'POST',
      url: `/r/${code}`,
      remoteAddress: address,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: new URLSearchParams({ _csrf: browser.lastCsrf!, amount: '5', currency: 'USD', lang, ...fields }).toString(),
    });
}

async function streamerWith(t: TestApp, rules: Partial<ModerationSettings>) {
  const user = await makeUser(t.database.db, { currency: 'USD' });
  await saveModerationSettings(t.database.db, user.id, { ...DEFAULT_SETTINGS, ...rules });
  return user;
}

const donationsOf = async (t: TestApp, userId: number) => (await t.database.db.selectFrom('donations').select(['username', 'message']).where('user_id', '=', userId).execute());

describe('donor page moderation', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('reject-mode banned words refuse the form before payment, in the donor’s language', async () => {
    const user = await streamerWith(t, { bannedWords: ['crap'], bannedWordsMode: 'reject' });
    const post = await donorOn(t.app, user.code);
    const res = await post({ username: 'Fan', message: 'what a сrар stream' });
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /Your message contains a word this streamer does not allow/);
    assert.match(res.body, /what a сrар stream/, 'the form keeps what the donor typed');
    const ru = await (await donorOn(t.app, user.code, 'ru_RU'))({ username: 'CRAP' });
    assert.equal(ru.statusCode, 422);
    assert.match(ru.body, /В вашем имени есть слово, которое этот стример не разрешает/);
    // Another locale falls back to English per string.
    const de = await (await donorOn(t.app, user.code, 'de_DE'))({ message: 'crap' });
    assert.match(de.body, /Your message contains a word/);
    assert.deepEqual(await donationsOf(t, user.id), [], 'nothing was paid or recorded');
    assert.equal((await post({ username: 'Fan', message: 'great stream' })).statusCode, 303);
  });

  test('reject-mode links and message length refuse the form; a donor’s own poll option is checked too', async () => {
    const user = await streamerWith(t, { links: 'reject', maxMessageLength: 10 });
    const post = await donorOn(t.app, user.code);
    const link = await post({ username: 'visit example.com' });
    assert.equal(link.statusCode, 422);
    assert.match(link.body, /does not allow links in your name/);
    const long = await post({ message: 'eleven char' });
    assert.equal(long.statusCode, 422);
    assert.match(long.body, /at most 10 characters/);
    assert.deepEqual(await donationsOf(t, user.id), []);
  });

  test('mask mode takes the donation and keeps what the donor sent in the record', async () => {
    const user = await streamerWith(t, { bannedWords: ['crap'], links: 'remove' });
    const res = await (await donorOn(t.app, user.code))({ username: 'crap', message: 'crap see example.com' });
    assert.equal(res.statusCode, 303);
    assert.deepEqual(await donationsOf(t, user.id), [{ username: 'crap', message: 'crap see example.com' }]);
    const shown = await t.database.db.selectFrom('donation_moderation').select(['shown_username', 'shown_message']).where('user_id', '=', user.id).execute();
    assert.deepEqual(shown, [{ shown_username: '****', shown_message: '**** see' }]);
  });

  test('per-IP limit: over it a 429 with Retry-After and a translated message; another address still pays', async () => {
    const user = await streamerWith(t, { ipRateLimit: 2, rateWindowSeconds: 600 });
    const post = await donorOn(t.app, user.code);
    assert.equal((await post({ username: 'A' }, '192.0.2.10')).statusCode, 303);
    assert.equal((await post({ username: 'B' }, '192.0.2.10')).statusCode, 303);
    const over = await post({ username: 'C' }, '192.0.2.10');
    assert.equal(over.statusCode, 429);
    const retryAfter = Number(over.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 600, String(over.headers['retry-after']));
    assert.match(over.body, /Too many donations in a short time\. Try again in \d+ seconds?\./);
    assert.equal((await post({ username: 'C' }, '192.0.2.11')).statusCode, 303);
    // Invalid forms are not counted: a donor fixing a typo is not punished.
    const other = await streamerWith(t, { ipRateLimit: 1, rateWindowSeconds: 600 });
    const postOther = await donorOn(t.app, other.code);
    assert.equal((await postOther({ amount: 'abc' }, '192.0.2.12')).statusCode, 422);
    assert.equal((await postOther({}, '192.0.2.12')).statusCode, 303);
    assert.equal((await postOther({}, '192.0.2.12')).statusCode, 429);
    // Limits are per streamer: the first streamer's counter did not move for the second one.
    assert.equal((await donationsOf(t, user.id)).length, 3);
  });

  test('per-donor limit: the same name, also written with look-alike letters, from any address', async () => {
    const user = await streamerWith(t, { donorRateLimit: 1, rateWindowSeconds: 600 });
    const post = await donorOn(t.app, user.code);
    assert.equal((await post({ username: 'Bob' }, '192.0.2.20')).statusCode, 303);
    const again = await post({ username: 'ВОВ' }, '192.0.2.21'); // Cyrillic В, О, В
    assert.equal(again.statusCode, 429);
    assert.ok(Number(again.headers['retry-after']) >= 1);
    assert.equal((await post({ username: 'Alice' }, '192.0.2.21')).statusCode, 303);
    // Anonymous donors are limited per address only.
    assert.equal((await post({ username: '' }, '192.0.2.22')).statusCode, 303);
    assert.equal((await post({ username: '' }, '192.0.2.23')).statusCode, 303);
  });
});

describe('donor page limits across nodes (Redis counters)', async () => {
  const skip = (await redisAvailable()) ? false : 'Redis not reachable';
  test('two nodes sharing REDIS_URL share a streamer’s per-IP limit', { skip }, async () => {
    const t = await buildTestApp({ env: { REDIS_URL } });
    const second = await buildApp(testConfig({ REDIS_URL }), { logger: false, database: t.database, secrets: t.app.ctx.secrets });
    await second.ready();
    try {
      const user = await streamerWith(t, { ipRateLimit: 2, rateWindowSeconds: 600 });
      const one = await donorOn(t.app, user.code);
      const two = await donorOn(second, user.code);
      assert.equal((await one({}, '192.0.2.30')).statusCode, 303);
      assert.equal((await two({}, '192.0.2.30')).statusCode, 303);
      const over = await one({}, '192.0.2.30');
      assert.equal(over.statusCode, 429);
      assert.equal((await two({}, '192.0.2.30')).statusCode, 429);
      assert.ok(Number(over.headers['retry-after']) >= 1);
    } finally {
      await second.close();
      await t.close();
    }
  });
});
