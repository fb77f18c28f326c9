import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { merchandiseParams, merchandiseWorld, uniqueId, type MerchandiseWorld } from '../merchandise/fixture.js';
import { assertHtml, browserFor, streamer, followAccepted } from './helpers.js';

let w: MerchandiseWorld;
before(async () => {
  w = await merchandiseWorld();
});
after(() => w.close());

test('merchandise: balance, sales and ledger of the logged-in streamer only', async () => {
  const browser = await browserFor(w.t, w.streamer);
  const empty = await browser.get('/dashboard/merchandise');
  assertHtml(empty);
  assert.match(empty.body, /No sales yet/);
  assert.match(empty.body, /Nothing credited yet/);

  const params = merchandiseParams(w, { title: { en_US: 'Hoodie <XL>' }, currency: 'EUR', price_user: '5.5', price_service: '1' });
  assert.equal((await w.call('POST', '/api/v1/merchandise', params)).statusCode, 201);
  const sale = await w.call('POST', '/api/v1/merchandise_sale', {
    user_id: w.streamer.id,
    external_id: uniqueId('sale'),
    merchant_identifier: w.merchant.identifier,
    merchandise_identifier: params.merchandise_identifier,
    amount: '40',
    currency: 'EUR',
    bought_amount: '2',
    username: '<b>Buyer</b>',
  });
  assert.equal(sale.statusCode, 201, sale.body);
  const saleId = sale.json().data.id;

  const page = await browser.get('/dashboard/merchandise');
  assertHtml(page);
  // 2 × 5.50 EUR = 11 EUR credited as 13.75 USD at 1 USD = 0.8 EUR.
  assert.match(page.body, /<strong class="stat-value">\$13\.75<\/strong>/);
  assert.match(page.body, /Hoodie &lt;XL&gt; <small>· Shop &amp; Co<\/small>/);
  assert.match(page.body, /&lt;b&gt;Buyer&lt;\/b&gt;/);
  assert.match(page.body, /€40\.00/);
  assert.match(page.body, new RegExp(`Sale #${saleId}`));
  assert.match(page.body, /<td data-label="Share" class="num">€11\.00<\/td>/);
  assert.match(page.body, /<td data-label="Credited" class="num">\$13\.75<\/td>/);

  const { browser: other } = await streamer(w.t);
  const theirs = await other.get('/dashboard/merchandise');
  assert.doesNotMatch(theirs.body, /Hoodie|Buyer/);
  assert.match(theirs.body, /<strong class="stat-value">\$0\.00<\/strong>/);
});

test('promocode: saved upper-case; invalid or taken codes are shown in the form; CSRF', async () => {
  const { user, browser } = await streamer(w.t);
  const holder = await streamer(w.t);
  await browser.get('/dashboard/merchandise');
  const ok = await followAccepted(browser, await browser.postForm('/dashboard/merchandise/promocode', { merchandise_promocode: ' mycode42 ' }), '/dashboard/merchandise');
  assert.match(ok.body, /Your promocode is now MYCODE42/);
  assert.match(ok.body, /value="MYCODE42"/);
  const read = async () => (await w.t.database.db.selectFrom('users').select('merchandise_promocode').where('id', '=', user.id).executeTakeFirstOrThrow()).merchandise_promocode;
  assert.equal(await read(), 'MYCODE42');

  const bad = await browser.postForm('/dashboard/merchandise/promocode', { merchandise_promocode: 'no!' });
  assertHtml(bad, 422);
  assert.match(bad.body, /The promocode must be 4–16 letters/);
  assert.match(bad.body, /value="no!"/);
  const taken = await browser.postForm('/dashboard/merchandise/promocode', { merchandise_promocode: holder.user.merchandise_promocode.toLowerCase() });
  assertHtml(taken, 422);
  assert.match(taken.body, /This promocode has already been taken/);
  const forged = await browser.postForm('/dashboard/merchandise/promocode', { merchandise_promocode: 'FORGED1', _csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
  assert.equal(await read(), 'MYCODE42');
});
