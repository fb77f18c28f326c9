import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ledgerOfSource } from '../../src/modules/balances/balances.repository.js';
import { balanceOf } from '../../src/modules/balances/balances.service.js';
import { durableWrite } from '../../src/modules/sales/write-batcher.js';
import { dialects } from '../helper.js';
import { merchandiseParams, merchandiseWorld, uniqueId } from './fixture.js';
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
