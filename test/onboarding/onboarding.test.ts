import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDonation, donationOf } from '../../src/modules/donations/donations.service.js';
import { SANDBOX_PAYIN } from '../../src/modules/donations/donations.sandbox.js';
import { onboardingChecklist, recordMilestone } from '../../src/modules/onboarding/onboarding.service.js';
import { dialects, makeUser, openTestDatabase } from '../helper.js';

for (const dialect of await dialects()) {
  test(`onboarding milestones keep the first time, per streamer (${dialect})`, async () => {
    const { database, drop } = await openTestDatabase(dialect);
    try {
      const db = database.db;
      const anna = await makeUser(db);
      const bob = await makeUser(db);
      assert.deepEqual(await onboardingChecklist(db, anna.id), { widget_added: null, test_alert_sent: null, link_shared: null });
      await recordMilestone(db, anna.id, 'widget_added', 1_000);
      await recordMilestone(db, anna.id, 'widget_added', 2_000);
      await Promise.all([recordMilestone(db, anna.id, 'link_shared', 3_000), recordMilestone(db, anna.id, 'link_shared', 3_000)]);
      assert.deepEqual(await onboardingChecklist(db, anna.id), { widget_added: 1_000, test_alert_sent: null, link_shared: 3_000 });
      assert.deepEqual(await onboardingChecklist(db, bob.id), { widget_added: null, test_alert_sent: null, link_shared: null });
    } finally {
      await drop();
    }
  });
}

test('a step recorded in one database is recorded in another with the same user id', async () => {
  const first = await openTestDatabase();
  const second = await openTestDatabase();
  try {
    const a = await makeUser(first.database.db);
    const b = await makeUser(second.database.db);
    assert.equal(a.id, b.id);
    await recordMilestone(first.database.db, a.id, 'test_alert_sent', 5);
    await recordMilestone(second.database.db, b.id, 'test_alert_sent', 6);
    assert.equal((await onboardingChecklist(second.database.db, b.id)).test_alert_sent, 6);
  } finally {
    await first.drop();
    await second.drop();
  }
});

test('a real donation ticks "link shared" (dated when it arrived); sandbox donations do not', async () => {
  const { database, drop } = await openTestDatabase();
  try {
    const db = database.db;
    const anna = await makeUser(db);
    await createDonation(db, { userId: anna.id, username: 'Test', message: '', amount: '1', currency: 'USD', payinSystem: SANDBOX_PAYIN });
    assert.equal((await onboardingChecklist(db, anna.id)).link_shared, null);
    const real = await createDonation(db, { userId: anna.id, username: 'Fan', message: '', amount: '2', currency: 'USD' });
    const arrived = (await donationOf(db, anna.id, real.id))!.created_at;
    assert.equal((await onboardingChecklist(db, anna.id)).link_shared, Number(arrived));
    assert.equal((await onboardingChecklist(db, anna.id)).link_shared, Number(arrived), 'recorded, not recomputed');
  } finally {
    await drop();
  }
});
