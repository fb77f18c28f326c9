import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ledgerOfSource } from '../../src/modules/balances/balances.repository.js';
import { balanceOf } from '../../src/modules/balances/balances.service.js';
import { durableWrite } from '../../src/modules/sales/write-batcher.js';
import { buildApp } from '../../src/app.js';
import { dialects, testConfig } from '../helper.js';
import { encodeBody, jsSignature, merchandiseParams, merchandiseWorld, uniqueId, type Params } from './fixture.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

for (const dialect of await dialects()) {
  describe(`sales ledger on ${dialect}`, () => {
    test('a sale, its two ledger rows and its alert commit together; duplicates race to one sale', async () => {
      const w = await merchandiseWorld(dialect);
      try {
        const db = w.t.database.db;
        const m = merchandiseParams(w, { currency: 'EUR', price_user: '3.10', price_service: '0.90' });
        assert.equal((await w.call('POST', '/api/v1/merchandise', m)).statusCode, 201);
        const sale = { user_id: w.streamer.id, external_id: uniqueId('s'), merchant_identifier: w.merchant.identifier, merchandise_identifier: m.merchandise_identifier, amount: '50', currency: 'EUR', bought_amount: '2' };
        const responses = await Promise.all(Array.from({ length: 6 }, () => w.call('POST', '/api/v1/merchandise_sale', sale, { encoding: 'json' })));
        assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 201], responses.map((r) => r.body).join('\n'));
        const id = responses.find((r) => r.statusCode === 201)!.json().data.id as number;
        const rows = await ledgerOfSource(db, 'merchandise_sale', id);
        assert.deepEqual(
          rows.map((r) => [r.account, r.user_id, r.amount, r.currency, r.rate, r.credited_amount, r.credited_currency]),
          [
            ['streamer', w.streamer.id, 620, 'EUR', 1.25, 775, 'USD'], // 3.10 × 2 EUR → 7.75 USD at 1 USD = 0.8 EUR
            ['service', null, 180, 'EUR', 1, 180, 'EUR'],
          ],
        );
        assert.deepEqual(await balanceOf(db, w.streamer.id), { currency: 'USD', amount: 7.75, amount_minor: 775, by_currency: { USD: 7.75 } });
        const events = await eventsOnChannel(db, `$widget:alerts_${w.streamer.id}`);
        assert.equal(events.length, 1);
        assert.equal(events[0]!.type, 'merchandise_sale.created');
        assert.equal(events[0]!.payload.reason, 'merchandise-sale');
        // The streamer changes main currency: older credits are converted at today's rate.
        await db.updateTable('users').set({ currency: 'EUR' }).where('id', '=', w.streamer.id).execute();
        assert.deepEqual(await balanceOf(db, w.streamer.id), { currency: 'EUR', amount: 6.2, amount_minor: 620, by_currency: { USD: 7.75 } });
      } finally {
        await w.close();
      }
    });

    test('a burst of sales is group-committed: each sale, retry and refusal gets its own answer; one credit and one alert per sale', async () => {
      const w = await merchandiseWorld(dialect);
      try {
        const db = w.t.database.db;
        const m = merchandiseParams(w, { currency: 'EUR', price_user: '3.10', price_service: '0.90' });
        assert.equal((await w.call('POST', '/api/v1/merchandise', m)).statusCode, 201);
        const sale = (n: number, overrides: Params = {}) => ({
          user_id: w.streamer.id,
          external_id: `burst-${n}`,
          merchant_identifier: w.merchant.identifier,
          merchandise_identifier: m.merchandise_identifier,
          amount: `${10 + n}.5`,
          currency: ['EUR', 'USD', 'RUB'][n % 3]!,
          bought_amount: String(1 + (n % 3)),
          username: n % 2 ? `Buyer "${n}" \\ ü` : undefined,
          ...overrides,
        });
        const requests = [
          ...Array.from({ length: 12 }, (_, n) => sale(n)),
          sale(0), // retries of sale 0 in the same burst
          sale(0),
          sale(0),
          sale(50, { merchandise_identifier: 'nothing-here' }),
          sale(51, { user_id: 2 ** 40 }),
        ].map((params) => Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Params);
        const responses = await Promise.all(requests.map((params) => w.call('POST', '/api/v1/merchandise_sale', params)));
        const codes = responses.map((r) => r.statusCode);
        assert.deepEqual(codes.slice(1, 12).filter((c) => c !== 201), [], responses.map((r) => r.body).join('\n'));
        // Sale 0 and its three retries: whichever the batch took first is the 201.
        assert.deepEqual([codes[0], ...codes.slice(12, 15)].sort(), [200, 200, 200, 201]);
        assert.deepEqual(codes.slice(15), [400, 400]);
        assert.deepEqual(Object.keys(responses[15]!.json().errors), ['merchandise_identifier']);
        assert.deepEqual(Object.keys(responses[16]!.json().errors), ['user_id']);
        for (const retry of responses.slice(12, 15)) assert.deepEqual(retry.json(), responses[0]!.json());

        const rows = await db.selectFrom('merchandise_sales').selectAll().where('merchant_id', '=', w.merchant.id).orderBy('id').execute();
        assert.equal(rows.length, 12);
        const ledger = await db.selectFrom('balance_ledger').selectAll().where('source', '=', 'merchandise_sale').orderBy('id').execute();
        assert.equal(ledger.length, 24);
        for (const row of rows) {
          assert.deepEqual(
            ledger.filter((l) => l.source_id === row.id).map((l) => [l.account, l.user_id, l.created_at]),
            [
              ['streamer', w.streamer.id, row.created_at],
              ['service', null, row.created_at],
            ],
          );
        }
        // The alert's payload is byte for byte the answer's resource plus the reason, whichever path wrote it.
        const events = await db.selectFrom('outbox').select(['type', 'user_id', 'channels', 'payload']).where('type', '=', 'merchandise_sale.created').orderBy('id').execute();
        const answers = responses.slice(0, 12).map((r) => r.json().data);
        assert.equal(new Set(answers.map((a) => a.id)).size, 12);
        assert.deepEqual(
          events.map((e) => e.payload).sort(),
          answers.map((data) => JSON.stringify({ ...data, reason: 'merchandise-sale' })).sort(),
        );
        for (const e of events) {
          assert.equal(e.user_id, w.streamer.id);
          assert.deepEqual(JSON.parse(e.channels), [`$widget:alerts_${w.streamer.id}`]);
        }
        const expected = answers.reduce((sum, data) => sum + ledger.find((l) => l.source_id === data.id && l.account === 'streamer')!.credited_amount, 0);
        assert.equal((await balanceOf(db, w.streamer.id)).amount_minor, expected);
      } finally {
        await w.close();
      }
    });

    test('two servers on one database racing the same sales: one sale, one credit and one alert each', async () => {
      const w = await merchandiseWorld(dialect);
      // A second node: its own process-level caches and group commit, the same database.
      const other = await buildApp(testConfig(w.t.env), { logger: false });
      try {
        const db = w.t.database.db;
        const m = merchandiseParams(w);
        assert.equal((await w.call('POST', '/api/v1/merchandise', m)).statusCode, 201);
        const sales = Array.from({ length: 6 }, (_, n) => ({
          user_id: w.streamer.id,
          external_id: uniqueId(`race${n}`),
          merchant_identifier: w.merchant.identifier,
          merchandise_identifier: m.merchandise_identifier,
          amount: '20',
          currency: 'EUR',
        }));
        const onOther = (params: Params) => {
          const body = encodeBody({ ...params, signature: jsSignature(params, w.secret) }, 'form');
          return other.inject({ method: 'POST', url: '/api/v1/merchandise_sale', payload: body.payload, headers: { authorization: `Bearer ${w.token}`, ...body.headers } });
        };
        const responses = await Promise.all(sales.flatMap((params) => [w.call('POST', '/api/v1/merchandise_sale', params), onOther(params), w.call('POST', '/api/v1/merchandise_sale', params), onOther(params)]));
        for (let n = 0; n < sales.length; n++) {
          const four = responses.slice(n * 4, n * 4 + 4);
          assert.deepEqual(four.map((r) => r.statusCode).sort(), [200, 200, 200, 201], four.map((r) => r.body).join('\n'));
          const ids = new Set(four.map((r) => r.json().data.id));
          assert.equal(ids.size, 1);
          const id = [...ids][0] as number;
          assert.equal((await ledgerOfSource(db, 'merchandise_sale', id)).length, 2);
        }
        assert.equal((await db.selectFrom('merchandise_sales').select('id').where('merchant_id', '=', w.merchant.id).execute()).length, 6);
        assert.equal((await eventsOnChannel(db, `$widget:alerts_${w.streamer.id}`)).length, 6);
      } finally {
        await other.close();
        await w.close();
      }
    });

    test('a recorded sale tells the commit listeners (the outbox relay publishes at once, not at its next poll)', async () => {
      const w = await merchandiseWorld(dialect);
      try {
        const m = merchandiseParams(w);
        assert.equal((await w.call('POST', '/api/v1/merchandise', m)).statusCode, 201);
        let commits = 0;
        const stop = w.t.database.onCommit(() => commits++);
        const sale = { user_id: w.streamer.id, external_id: uniqueId('c'), merchant_identifier: w.merchant.identifier, merchandise_identifier: m.merchandise_identifier, amount: '20', currency: 'EUR' };
        assert.equal((await w.call('POST', '/api/v1/merchandise_sale', sale)).statusCode, 201);
        stop();
        assert.ok(commits >= 1, 'the sale signalled its commit');
      } finally {
        await w.close();
      }
    });

    test('durableWrite: a job that fails is rolled back alone; the others commit', async () => {
      const w = await merchandiseWorld(dialect);
      try {
        const db = w.t.database.db;
        const insert = (channel: string, fail: boolean) =>
          durableWrite(db, async (tx) => {
            await tx.insertInto('outbox').values({ channels: JSON.stringify([channel]), payload: '{}', created_at: Date.now() }).execute();
            if (fail) throw new Error('job failed after writing');
            return channel;
          });
        const results = await Promise.allSettled([insert('batch-a', false), insert('batch-b', true), insert('batch-c', false)]);
        assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
        const channels = (await db.selectFrom('outbox').select('channels').where('channels', 'like', '%batch-%').orderBy('channels').execute()).map((r) => JSON.parse(r.channels)[0]);
        assert.deepEqual(channels, ['batch-a', 'batch-c']);
      } finally {
        await w.close();
      }
    });
  });
}
