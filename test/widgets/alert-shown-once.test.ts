import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { markShown } from '../../src/modules/widgets/alerts.service.js';
import { buildTestApp, dialects, makeUser, type TestApp } from '../helper.js';

/**
 * `alert.shown` (a webhook event) is recorded by the one call that marked the alert shown. The
 * widget may report the same alert twice in quick succession (two OBS scenes, a retry); a repeat in
 * the same millisecond used to pass for the first mark, and its receivers got the event twice.
 */
for (const dialect of await dialects()) {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ dialect });
  });
  after(async () => t.close());

  test(`${dialect}: two marks of one alert in the same millisecond record alert.shown once`, async () => {
    const user = await makeUser(t.database.db);
    const donation = await createDonation(t.database.db, { userId: user.id, amount: '5', currency: 'USD', username: 'Ann', message: 'hi' });
    const frozen = Date.now();
    mock.method(Date, 'now', () => frozen);
    try {
      const first = await markShown(t.database.db, user.id, 'donation', donation.id);
      const second = await markShown(t.database.db, user.id, 'donation', donation.id);
      assert.deepEqual(second, first, 'the repeat answers the first mark');
    } finally {
      mock.restoreAll();
    }
    const events = await t.database.db.selectFrom('outbox').select('type').where('type', '=', 'alert.shown').execute();
    assert.equal(events.length, 1);
  });
}
