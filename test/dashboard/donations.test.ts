import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { upsertRate } from '../../src/modules/currencies/currencies.repository.js';
import { insertDonation } from '../../src/modules/donations/donations.repository.js';
import { buildTestApp, dialects, type TestApp } from '../helper.js';
import { assertHtml, streamer } from './helpers.js';

for (const dialect of await dialects()) describe(`donations page on ${dialect}`, () => {
  let t: TestApp;
  let me: Awaited<ReturnType<typeof streamer>>;
  const DAY = 24 * 3600 * 1000;
  const T0 = Date.UTC(2025, 0, 10, 12, 0, 0);

  /** Donor names shown on one page, in order (each row's donor cell). */
  function donors(body: string): string[] {
    return [...body.matchAll(/<td data-label="Donor" class="donor">([^<]*)<\/td>/g)].map((m) => m[1]!);
  }

  before(async () => {
    t = await buildTestApp({ dialect });
    me = await streamer(t, { currency: 'USD' });
    const other = await streamer(t);
    await upsertRate(t.database.db, 'EUR', 0.8, '2025-01-01');
    const row = (userId: number, i: number, over: Partial<Parameters<typeof insertDonation>[1]> = {}) =>
      insertDonation(t.database.db, {
        user_id: userId,
        username: `Donor ${String(i).padStart(2, '0')}`,
        message_type: 'text',
        message: `message ${i}`,
        amount: 100 * i,
        currency: 'USD',
        amount_in_user_currency: 100 * i,
        user_currency: 'USD',
        payin_system: null,
        is_shown: 0,
        created_at: T0 + i * DAY,
        shown_at: null,
        poll_option_id: null,
        ...over,
      });
    // 65 donations, one a day from 2025-01-11; a few with special names and currencies.
    for (let i = 1; i <= 65; i++) {
      if (i === 7) await row(me.user.id, i, { username: 'Big_Fan 100%', currency: 'EUR', amount: 5000, amount_in_user_currency: 6250 });
      else if (i === 8) await row(me.user.id, i, { username: 'big fan' });
      else if (i === 9) await row(me.user.id, i, { username: '<script>alert(1)</script>', message: '<b>bold</b>' });
      else await row(me.user.id, i);
    }
    await row(other.user.id, 1, { username: 'Stranger' });
  });
  after(() => t.close());

  test('30 per page, newest first, with page links; a page past the end is empty', async () => {
    const first = await me.browser.get('/dashboard/donations');
    assertHtml(first);
    assert.match(first.body, /65 donations\./);
    const names = donors(first.body);
    assert.equal(names.length, 30);
    assert.equal(names[0], 'Donor 65');
    assert.equal(names[29], 'Donor 36');
    assert.match(first.body, /Page 1 of 3/);
    assert.match(first.body, /href="\/dashboard\/donations\?page=2" rel="next"/);
    const third = await me.browser.get('/dashboard/donations?page=3');
    assert.equal(donors(third.body).length, 5);
    assert.equal(donors(third.body).at(-1), 'Donor 01');
    assert.match(third.body, /href="\/dashboard\/donations\?page=2" rel="prev"/);
    const past = await me.browser.get('/dashboard/donations?page=9');
    assertHtml(past);
    assert.equal(donors(past.body).length, 0);
    assert.match(past.body, /No donations on this page/);
    assert.equal(donors((await me.browser.get('/dashboard/donations?page=abc')).body)[0], 'Donor 65', 'a bad page number is page 1');
  });

  test('user text is escaped; another streamer’s donations never appear', async () => {
    const body = (await me.browser.get('/dashboard/donations?page=2')).body;
    assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(body, /&lt;b&gt;bold&lt;\/b&gt;/);
    assert.doesNotMatch(body, /<script>alert/);
    assert.doesNotMatch((await me.browser.get('/dashboard/donations?donor=Stranger')).body, /<td data-label="Donor" class="donor">Stranger/);
  });

  test('filters: donor substring (case-insensitive, % and _ literal), currency, date range, minimum amount; links keep them', async () => {
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?donor=BIG')).body), ['big fan', 'Big_Fan 100%']);
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?donor=100%25')).body), ['Big_Fan 100%']);
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?donor=g_f')).body), ['Big_Fan 100%']);
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?currency=EUR')).body), ['Big_Fan 100%']);
    // Days are UTC and both ends are included: 2025-01-20 … 2025-01-22 are donations 10, 11, 12.
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?from=2025-01-20&to=2025-01-22')).body), ['Donor 12', 'Donor 11', 'Donor 10']);
    // Without a currency the minimum is in the streamer's currency (amount_in_user_currency): 62.50 USD for the EUR one.
    const min = await me.browser.get('/dashboard/donations?min=62.5');
    assert.match(min.body, /4 donations match/);
    assert.deepEqual(donors(min.body), ['Donor 65', 'Donor 64', 'Donor 63', 'Big_Fan 100%']);
    assert.deepEqual(donors((await me.browser.get('/dashboard/donations?currency=EUR&min=50.01')).body), []);
    assert.match((await me.browser.get('/dashboard/donations?currency=EUR&min=50.01')).body, /No donation matches these filters/);

    const paged = await me.browser.get('/dashboard/donations?donor=donor&from=2025-01-01');
    assert.match(paged.body, /62 donations match/);
    assert.match(paged.body, /href="\/dashboard\/donations\?donor=donor&amp;from=2025-01-01&amp;page=2"/);
    assert.match(paged.body, /<input name="donor" maxlength="64" value="donor"/, 'the form keeps the filters');
  });

  test('bad filters are shown beside their fields with a 400, and list nothing', async () => {
    const res = await me.browser.get('/dashboard/donations?currency=XYZ&from=2025-02-30&to=yesterday&min=-5');
    assertHtml(res, 400);
    assert.match(res.body, /The currency must be one of EUR, USD, RUB, BRL, TRY/);
    assert.match(res.body, /The from date must be a date such as 2025-01-31/);
    assert.match(res.body, /The to date must be a date such as 2025-01-31/);
    assert.match(res.body, /The minimum amount must be a positive number/);
    assert.equal(donors(res.body).length, 0);
    const reversed = await me.browser.get('/dashboard/donations?from=2025-02-02&to=2025-02-01');
    assertHtml(reversed, 400);
    assert.match(reversed.body, /The to date must not be before the from date/);
  });
});
