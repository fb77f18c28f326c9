import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { searchUserRows } from '../../src/modules/accounts/accounts.repository.js';
import { filteredDonations, insertDonation, type DonationFilter } from '../../src/modules/donations/donations.repository.js';
import type { DonationRow } from '../../src/modules/donations/donations.table.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';

/** The dashboard's list queries (donations filter, admin user search) on every dialect. */
for (const dialect of await dialects()) {
  describe(`dashboard list queries on ${dialect}`, () => {
    let t: TestDatabase;
    let userId: number;
    const T0 = Date.UTC(2025, 2, 1);
    const HOUR = 3600_000;

    before(async () => {
      t = await openTestDatabase(dialect);
      userId = (await makeUser(t.database.db, { currency: 'USD' })).id;
      const other = (await makeUser(t.database.db)).id;
      const add = (user: number, username: string, at: number, money: { amount: number; currency: string; converted: number }) =>
        insertDonation(t.database.db, {
          user_id: user, username, message_type: 'text', message: '', amount: money.amount, currency: money.currency,
          amount_in_user_currency: money.converted, user_currency: 'USD', payin_system: null, is_shown: 0, created_at: at, shown_at: null, poll_option_id: null,
        });
      const usd = (minor: number) => ({ amount: minor, currency: 'USD', converted: minor });
      await add(userId, 'Alice', T0, usd(500));
      await add(userId, '100% fan', T0 + HOUR, usd(1000));
      await add(userId, '100 fans', T0 + 2 * HOUR, usd(1500));
      await add(userId, 'snake_case', T0 + 24 * HOUR, { amount: 2000, currency: 'EUR', converted: 2300 });
      await add(userId, 'snakeXcase', T0 + 25 * HOUR, usd(300));
      await add(userId, 'back\\slash', T0 + 48 * HOUR, { amount: 800, currency: 'EUR', converted: 920 });
      await add(other, 'Alice', T0, usd(99_999));
    });
    after(() => t.drop());

    const names = (rows: DonationRow[]) => rows.map((r) => r.username);
    const find = (filter: DonationFilter, limit = 30, offset = 0) => filteredDonations(t.database.db, userId, filter, { limit, offset });

    test('no filter: only the streamer\'s donations, newest first, with the total', async () => {
      const { rows, total } = await find({});
      assert.equal(total, 6);
      assert.deepEqual(names(rows), ['back\\slash', 'snakeXcase', 'snake_case', '100 fans', '100% fan', 'Alice']);
    });

    test('donor name: part of it, ignoring case; %, _ and \\ match only themselves', async () => {
      assert.deepEqual(names((await find({ donor: 'ALI' })).rows), ['Alice']);
      assert.deepEqual(names((await find({ donor: '0%' })).rows), ['100% fan']);
      assert.deepEqual(names((await find({ donor: 'e_c' })).rows), ['snake_case']);
      assert.deepEqual(names((await find({ donor: 'k\\s' })).rows), ['back\\slash']);
      assert.deepEqual(names((await find({ donor: '%' })).rows), ['100% fan']);
    });

    test('currency, day range (from inclusive, to exclusive) and minimum amount combine', async () => {
      assert.deepEqual(names((await find({ currency: 'EUR' })).rows), ['back\\slash', 'snake_case']);
      assert.deepEqual(names((await find({ fromMs: T0 + HOUR, toMsExclusive: T0 + 24 * HOUR })).rows), ['100 fans', '100% fan']);
      // Without a currency the minimum applies to the amount converted into the streamer's currency…
      assert.deepEqual(names((await find({ minAmount: 2300 })).rows), ['snake_case']);
      // …with one, to the amount the donor paid in it.
      assert.deepEqual(names((await find({ currency: 'EUR', minAmount: 2300 })).rows), []);
      assert.deepEqual(names((await find({ currency: 'EUR', minAmount: 2000 })).rows), ['snake_case']);
      const both = await find({ donor: 'snake', fromMs: T0 + 24 * HOUR, minAmount: 1000 });
      assert.deepEqual([names(both.rows), both.total], [['snake_case'], 1]);
    });

    test('paging: limit and offset pick the page, the total counts every match', async () => {
      const page2 = await find({ currency: 'USD' }, 2, 2);
      assert.equal(page2.total, 4);
      assert.deepEqual(names(page2.rows), ['100% fan', 'Alice']);
      assert.deepEqual((await find({ currency: 'USD' }, 2, 4)).rows, []);
    });

    test('user search: part of the e-mail, name or code, ignoring case, with escaping and paging', async () => {
      const db = t.database.db;
      const a = await makeUser(db, { email: 'Percent%Person@example.test', name: 'Quirky Name' });
      const b = await makeUser(db, { email: 'plain@example.test', name: 'Under_Score' });
      const byEmail = await searchUserRows(db, { search: 'PERCENT%', limit: 10, offset: 0 });
      assert.deepEqual(byEmail.rows.map((r) => r.id), [a.id]);
      assert.deepEqual((await searchUserRows(db, { search: 'quirky', limit: 10, offset: 0 })).rows.map((r) => r.id), [a.id]);
      assert.deepEqual((await searchUserRows(db, { search: 'r_s', limit: 10, offset: 0 })).rows.map((r) => r.id), [b.id], 'code under_score; _ is literal');
      assert.deepEqual((await searchUserRows(db, { search: '%', limit: 10, offset: 0 })).rows.map((r) => r.id), [a.id]);
      const all = await searchUserRows(db, { limit: 2, offset: 2 });
      assert.equal(all.total, 4);
      assert.deepEqual(all.rows.map((r) => r.id), [a.id, b.id], 'id order');
      assert.equal('password_hash' in all.rows[0]!, false, 'the list never carries password hashes');
    });
  });
}
