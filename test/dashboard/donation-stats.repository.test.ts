import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS, donationsPerDay, topDonors } from '../../src/modules/donations/donation-stats.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { dialects, makeUser, openTestDatabase } from '../helper.js';

for (const dialect of await dialects()) {
  test(`donations per UTC day and top donors, in the main currency only, moderated names shown (${dialect})`, async () => {
    const { database, drop } = await openTestDatabase(dialect);
    try {
      const db = database.db;
      const user = await makeUser(db, { currency: 'USD' });
      const today = Math.floor(Date.now() / DAY_MS);
      const at = async (ago: number, username: string, amount: string) => {
        const d = await createDonation(db, { userId: user.id, username, amount, currency: 'USD', message: '' });
        await db.updateTable('donations').set({ created_at: (today - ago) * DAY_MS + 1000 }).where('id', '=', d.id).execute();
        return d.id;
      };
      await at(0, 'Ann', '5');
      await at(0, 'Bob', '2.5');
      await at(3, 'Ann', '10');
      const masked = await at(3, 'badword', '20');
      await at(40, 'Ann', '100');
      // A donation recorded under another main currency is left out of the sums.
      const other = await at(1, 'Eur', '50');
      await db.updateTable('donations').set({ user_currency: 'EUR' }).where('id', '=', other).execute();
      await db.insertInto('donation_moderation').values({ donation_id: masked, user_id: user.id, status: 'published', shown_username: '*******', shown_message: '', reasons: '[]', publish_at: Date.now(), decided_at: null }).execute();

      const since = (today - 29) * DAY_MS;
      assert.deepEqual(await donationsPerDay(db, user.id, 'USD', since), [
        { day: today - 3, count: 2, total: 3000 },
        { day: today, count: 2, total: 750 },
      ]);
      assert.deepEqual(await topDonors(db, user.id, 'USD', since, 5), [
        { username: '*******', count: 1, total: 2000 },
        { username: 'Ann', count: 2, total: 1500 },
        { username: 'Bob', count: 1, total: 250 },
      ]);
      assert.deepEqual(await topDonors(db, user.id, 'USD', since, 1), [{ username: '*******', count: 1, total: 2000 }]);
    } finally {
      await drop();
    }
  });
}
