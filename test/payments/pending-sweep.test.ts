import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { insertPending, markPendingRecorded } from '../../src/modules/payments/payments.repository.js';
import { PENDING_RETENTION_MS, sweepUnpaidPending } from '../../src/modules/payments/pending.sweeper.js';
import { makeUser, openTestDatabase, postgresAvailable, testConfig } from '../helper.js';
import type { DB } from '../../src/db/schema.js';
import type { Kysely } from 'kysely';

const DAY = 24 * 3600_000;

async function pending(db: Kysely<DB>, userId: number, ref: string, createdAt: number) {
  return insertPending(db, { ref, user_id: userId, provider: 'yoomoney', amount: 10000, currency: 'RUB', username: 'Donor', message: '', poll_option_id: null, poll_option_title: null, checkout_id: null, created_at: createdAt, donation_id: null });
}

const refsOf = async (db: Kysely<DB>) => (await db.selectFrom('pending_donations').select('ref').orderBy('ref').execute()).map((r) => r.ref);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`abandoned pending donations are swept (${dialect})`, { skip: dialect === 'postgres' && !(await postgresAvailable()) && 'no PostgreSQL' }, () => {
    test('unpaid ones older than the retention go; recent and paid ones stay', async () => {
      const t = await openTestDatabase(dialect);
      try {
        const db = t.database.db;
        const user = await makeUser(db, { currency: 'RUB' });
        const now = Date.now();
        await pending(db, user.id, 'a-old-unpaid', now - PENDING_RETENTION_MS - DAY);
        await pending(db, user.id, 'b-recent-unpaid', now - PENDING_RETENTION_MS + DAY);
        const paid = await pending(db, user.id, 'c-old-paid', now - PENDING_RETENTION_MS - DAY);
        const donation = await createDonation(db, { userId: user.id, username: 'Donor', amount: '100', currency: 'RUB' });
        await markPendingRecorded(db, paid.id, donation.id);

        assert.equal(await sweepUnpaidPending(db, now), 1);
        assert.deepEqual(await refsOf(db), ['b-recent-unpaid', 'c-old-paid']);
        assert.equal(await sweepUnpaidPending(db, now), 0, 'a second sweep finds nothing');
      } finally {
        await t.drop();
      }
    });

    test('a starting server sweeps at once', async () => {
      const t = await openTestDatabase(dialect);
      try {
        const user = await makeUser(t.database.db, { currency: 'RUB' });
        await pending(t.database.db, user.id, 'abandoned', Date.now() - PENDING_RETENTION_MS - DAY);
        const app = await buildApp(testConfig(), { logger: false, database: t.database });
        await app.ready();
        try {
          for (let i = 0; i < 100 && (await refsOf(t.database.db)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
          assert.deepEqual(await refsOf(t.database.db), []);
        } finally {
          await app.close();
        }
      } finally {
        await t.drop();
      }
    });
  });
}
