import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ledgerOfSource, serviceRevenue } from '../../src/modules/balances/balances.repository.js';
import { balanceOf } from '../../src/modules/balances/balances.service.js';
import { makeUser } from '../helper.js';
import { merchandiseParams, merchandiseWorld, uniqueId, type Encoding, type MerchandiseWorld, type Params } from './fixture.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

let w: MerchandiseWorld;
before(async () => {
  w = await merchandiseWorld();
});
after(() => w.close());

async function merchandise(overrides: Params = {}): Promise<string> {
  const params = merchandiseParams(w, overrides);
  const res = await w.call('POST', '/api/v1/merchandise', params);
  assert.equal(res.statusCode, 201, res.body);
  return params.merchandise_identifier as string;
}

function saleParams(merchandiseIdentifier: string, overrides: Params = {}): Params {
  return { user_id: w.streamer.id, external_id: uniqueId('sale'), merchant_identifier: w.merchant.identifier, merchandise_identifier: merchandiseIdentifier, amount: '20', currency: 'EUR', ...overrides };
}

const sell = (params: Params, encoding: Encoding = 'form') => w.call('POST', '/api/v1/merchandise_sale', params, { encoding });

async function outboxFor(userId: number) {
  return eventsOnChannel(w.t.database.db, `$widget:alerts_${userId}`);
}

describe('4.8 POST /merchandise_sale', () => {
  for (const encoding of ['form', 'multipart', 'json'] as const) {
    test(`records a sale from a ${encoding} body: 201 with the spec §2 sale alert, queued for the widget`, async () => {
      const streamer = await makeUser(w.t.database.db, { currency: 'USD' });
      const m = await merchandise();
      const params = saleParams(m, { user_id: streamer.id, bought_amount: '2', username: 'Customer <b>', message: 'Love it' });
      const res = await sell(params, encoding);
      assert.equal(res.statusCode, 201, res.body);
      const data = res.json().data;
      assert.deepEqual(Object.keys(data).sort(), ['amount', 'bought_amount', 'created_at', 'currency', 'external_id', 'id', 'is_shown', 'message', 'name', 'shown_at', 'username'].sort());
      assert.equal(data.name, 'merchandise-sale');
      assert.equal(data.external_id, params.external_id);
      assert.equal(data.username, 'Customer <b>');
      assert.equal(data.message, 'Love it');
      assert.equal(data.amount, 20);
      assert.equal(data.currency, 'EUR');
      assert.equal(data.bought_amount, 2);
      assert.equal(data.is_shown, 0);
      assert.equal(data.shown_at, null);
      assert.match(data.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const events = await outboxFor(streamer.id);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.payload, { ...data, reason: 'merchandise-sale' });
    });
  }

  test('JSON clients may send numbers: user_id, amount and bought_amount as numbers, external_id as a number echoed as text', async () => {
    const m = await merchandise();
    const externalId = Date.now() % 1_000_000_000;
    const res = await sell(saleParams(m, { user_id: w.streamer.id, external_id: externalId, amount: 12.5, bought_amount: 3 }), 'json');
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.external_id, String(externalId));
    assert.equal(data.amount, 12.5);
    assert.equal(data.bought_amount, 3);
    // The same sale in a form body (all text) is the identical retry.
    const retry = await sell(saleParams(m, { user_id: String(w.streamer.id), external_id: String(externalId), amount: '12.50', bought_amount: '3' }));
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json().data.id, data.id);
  });

  test('defaults: bought_amount 1, username and message null', async () => {
    const res = await sell(saleParams(await merchandise()));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.bought_amount, 1);
    assert.equal(res.json().data.username, null);
    assert.equal(res.json().data.message, null);
  });
});

describe('idempotency (compatibility.md §3)', () => {
  test('an identical retry answers 200 with the original sale and credits nothing again', async () => {
    const streamer = await makeUser(w.t.database.db, { currency: 'USD' });
    const m = await merchandise();
    const params = saleParams(m, { user_id: streamer.id, username: 'Ann' });
    const first = await sell(params);
    assert.equal(first.statusCode, 201);
    const before = await balanceOf(w.t.database.db, streamer.id);
    const retry = await sell(params, 'json');
    assert.equal(retry.statusCode, 200, retry.body);
    assert.deepEqual(retry.json(), first.json());
    assert.deepEqual(await balanceOf(w.t.database.db, streamer.id), before);
    assert.equal((await outboxFor(streamer.id)).length, 1, 'no second alert');
  });

  test('the same external_id with different content is a 400 on external_id', async () => {
    const m = await merchandise();
    const params = saleParams(m);
    assert.equal((await sell(params)).statusCode, 201);
    for (const change of [{ amount: '21' }, { bought_amount: '3' }, { username: 'Someone' }, { currency: 'USD' }]) {
      const res = await sell({ ...params, ...change });
      assert.equal(res.statusCode, 400, JSON.stringify(change));
      assert.deepEqual(Object.keys(res.json().errors), ['external_id']);
    }
  });

  test('concurrent duplicates produce one sale, one credit, and no 500', async () => {
    const streamer = await makeUser(w.t.database.db, { currency: 'USD' });
    const params = saleParams(await merchandise(), { user_id: streamer.id });
    const responses = await Promise.all(Array.from({ length: 8 }, () => sell(params)));
    assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
    const sales = await w.t.database.db.selectFrom('merchandise_sales').selectAll().where('external_id', '=', params.external_id as string).execute();
    assert.equal(sales.length, 1);
    assert.equal((await balanceOf(w.t.database.db, streamer.id)).amount, 6.88); // 5.50 EUR → 687.5 US cents → 688 (half-up)
  });

  test('external_id is scoped per merchant: nothing in common with another sale of the same id elsewhere', async () => {
    const params = saleParams(await merchandise());
    assert.equal((await sell(params)).statusCode, 201);
    assert.equal((await sell({ ...params, external_id: `${params.external_id}x` })).statusCode, 201);
  });
});

describe('revenue (rounding: src/domain/revenue.ts)', () => {
  // Fixture rates: 1 USD = 0.8 EUR = 80 RUB = 5 BRL = 40 TRY.
  async function creditsOf(saleRes: { json(): { data: { id: number } } }) {
    return ledgerOfSource(w.t.database.db, 'merchandise_sale', saleRes.json().data.id);
  }

  test('fixed prices × several items, converted to the streamer currency (EUR → USD)', async () => {
    const streamer = await makeUser(w.t.database.db, { currency: 'USD' });
    const m = await merchandise({ currency: 'EUR', price_user: '5.55', price_service: '1.01' });
    const res = await sell(saleParams(m, { user_id: streamer.id, amount: '100', currency: 'RUB', bought_amount: '3' }));
    assert.equal(res.statusCode, 201, res.body);
    const [user, service] = await creditsOf(res);
    // 5.55 × 3 = 16.65 EUR exactly; 1665 × 1 / 0.8 = 2081.25 → 2081 (half-up) US cents.
    assert.deepEqual({ ...user, id: 0, created_at: 0 }, { id: 0, created_at: 0, account: 'streamer', user_id: streamer.id, source: 'merchandise_sale', source_id: res.json().data.id, amount: 1665, currency: 'EUR', rate: 1.25, credited_amount: 2081, credited_currency: 'USD' });
    // The service keeps its share in the merchandise currency: 1.01 × 3 = 3.03 EUR.
    assert.deepEqual({ ...service, id: 0, created_at: 0 }, { id: 0, created_at: 0, account: 'service', user_id: null, source: 'merchandise_sale', source_id: res.json().data.id, amount: 303, currency: 'EUR', rate: 1, credited_amount: 303, credited_currency: 'EUR' });
    assert.deepEqual(await balanceOf(w.t.database.db, streamer.id), { currency: 'USD', amount: 20.81, amount_minor: 2081, by_currency: { USD: 20.81 } });
  });

  test('percentages of the sale amount, half-up at the minor unit, then converted (RUB → EUR)', async () => {
    const streamer = await makeUser(w.t.database.db, { currency: 'EUR' });
    const m = await merchandise({ is_percentage: '1', currency: 'USD', price_user: '12.5', price_service: '2.75' });
    const res = await sell(saleParams(m, { user_id: streamer.id, amount: '999.99', currency: 'RUB', bought_amount: '4' }));
    assert.equal(res.statusCode, 201, res.body);
    const [user, service] = await creditsOf(res);
    // 12.5 % of 99 999 kopecks = 12 499.875 → 12 500 (half-up, bought_amount plays no part: amount is the total).
    assert.equal(user!.amount, 12500);
    assert.equal(user!.currency, 'RUB');
    // 12 500 kopecks × 0.8 / 80 = 125 euro cents.
    assert.equal(user!.rate, 0.01);
    assert.equal(user!.credited_amount, 125);
    assert.equal(user!.credited_currency, 'EUR');
    // 2.75 % of 99 999 = 2 749.9725 → 2 750 kopecks, kept in RUB.
    assert.equal(service!.amount, 2750);
    assert.equal(service!.credited_amount, 2750);
    assert.equal(service!.credited_currency, 'RUB');
  });

  test('half-up exactly at .5 in the percentage step and in the conversion step', async () => {
    const streamer = await makeUser(w.t.database.db, { currency: 'BRL' });
    const m = await merchandise({ is_percentage: '1', price_user: '50', price_service: '0.5' });
    const res = await sell(saleParams(m, { user_id: streamer.id, amount: '0.01', currency: 'USD' }));
    const [user, service] = await creditsOf(res);
    assert.equal(user!.amount, 1); // 50 % of 1 cent = 0.5 → 1
    assert.equal(user!.credited_amount, 5); // 1 US cent × 5 = 5 centavos
    assert.equal(service!.amount, 0); // 0.5 % of 1 cent = 0.005 → 0
    const fixed = await merchandise({ currency: 'USD', price_user: '0.01', price_service: '0' });
    const streamerEur = await makeUser(w.t.database.db, { currency: 'EUR' });
    const sale2 = await sell(saleParams(fixed, { user_id: streamerEur.id, amount: '1', currency: 'USD' }));
    const [credit] = await creditsOf(sale2);
    // 1 US cent × 0.8 = 0.8 euro cents → 1 (half-up).
    assert.equal(credit!.credited_amount, 1);
  });

  test('balance is the sum of ledger rows over several sales in two currencies', async () => {
    const db = w.t.database.db;
    const streamer = await makeUser(db, { currency: 'USD' });
    const eur = await merchandise({ currency: 'EUR', price_user: '2', price_service: '1' });
    const pct = await merchandise({ currency: 'USD', is_percentage: '1', price_user: '10', price_service: '5' });
    const revenueBefore = await serviceRevenue(db);
    assert.equal((await sell(saleParams(eur, { user_id: streamer.id, bought_amount: '2' }))).statusCode, 201); // 4 EUR → 5 USD
    assert.equal((await sell(saleParams(pct, { user_id: streamer.id, amount: '40', currency: 'TRY' }))).statusCode, 201); // 10 % of 40 TRY = 4 TRY → 0.10 USD
    assert.equal((await sell(saleParams(pct, { user_id: streamer.id, amount: '3.33', currency: 'USD' }))).statusCode, 201); // 0.333 → 0.33 USD
    const balance = await balanceOf(db, streamer.id);
    assert.deepEqual(balance, { currency: 'USD', amount: 5.43, amount_minor: 543, by_currency: { USD: 5.43 } });
    const revenue = await serviceRevenue(db);
    assert.equal((revenue.EUR ?? 0) - (revenueBefore.EUR ?? 0), 200);
    assert.equal((revenue.TRY ?? 0) - (revenueBefore.TRY ?? 0), 200);
    assert.equal((revenue.USD ?? 0) - (revenueBefore.USD ?? 0), 17); // 5 % of 3.33 = 0.1665 → 0.17
  });
});

describe('sales that are refused (400 with errors)', () => {
  test('inactive merchandise, expired merchandise, unknown merchandise, unknown user', async () => {
    const inactive = await merchandise({ is_active: '0' });
    const expired = await merchandise({ end_at_ts: String(Math.floor(Date.now() / 1000) - 1) });
    const cases: Array<[Params, string]> = [
      [saleParams(inactive), 'merchandise_identifier'],
      [saleParams(expired), 'merchandise_identifier'],
      [saleParams('nope'), 'merchandise_identifier'],
      [saleParams(await merchandise(), { user_id: '99999999' }), 'user_id'],
    ];
    for (const [params, field] of cases) {
      const res = await sell(params);
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.json().errors[field], res.body);
    }
    const none = await w.t.database.db.selectFrom('merchandise_sales').select('id').where('external_id', 'in', cases.map(([p]) => p.external_id as string)).execute();
    assert.equal(none.length, 0);
  });

  const rules: Array<[string, Params, string]> = [
    ['user_id required', { user_id: undefined }, 'user_id'],
    ['user_id an integer', { user_id: 'abc' }, 'user_id'],
    ['external_id required', { external_id: undefined }, 'external_id'],
    ['external_id at most 32', { external_id: 'x'.repeat(33) }, 'external_id'],
    ['merchant_identifier required', { merchant_identifier: undefined }, 'merchant_identifier'],
    ['merchandise_identifier required', { merchandise_identifier: undefined }, 'merchandise_identifier'],
    ['amount required', { amount: undefined }, 'amount'],
    ['amount a number', { amount: '12,3.4' }, 'amount'],
    ['amount not negative', { amount: '-3' }, 'amount'],
    ['currency required', { currency: undefined }, 'currency'],
    ['currency from the input list', { currency: 'UAH' }, 'currency'],
    ['bought_amount an integer', { bought_amount: '1.5' }, 'bought_amount'],
    ['bought_amount at least 1', { bought_amount: '0' }, 'bought_amount'],
    ['message at most 300', { message: 'x'.repeat(301) }, 'message'],
  ];
  for (const [name, overrides, field] of rules) {
    test(`${name} → 400 on ${field}`, async () => {
      const params = saleParams('whatever', overrides);
      for (const [k, v] of Object.entries(params)) if (v === undefined) delete params[k];
      const res = await sell(params);
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.json().errors[field], res.body);
    });
  }

  test('external_id of exactly 32 characters is fine', async () => {
    const res = await sell(saleParams(await merchandise(), { external_id: uniqueId('e').padEnd(32, '0') }));
    assert.equal(res.statusCode, 201, res.body);
  });
});
