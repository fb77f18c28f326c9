import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDonation, type NewDonation } from '../../src/modules/donations/donations.service.js';
import { NotFoundError } from '../../src/domain/errors.js';
import { toDonationResource } from '../../src/modules/donations/donations.resource.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { findGoal } from '../../src/modules/goals/goals.repository.js';
import { DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { donationChannel, goalChannel } from '../../src/modules/outbox/channels.js';
import { allEvents, eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { otherProcess } from '../other-process.js';

/**
 * Donations that arrive together (issue 16): on PostgreSQL they are group-committed, a batch in two
 * statements (look-up, one self-committing write of donations + moderation rows + alerts); on SQLite
 * each is its own transaction. The contract is the same on both: every donation its own answer,
 * durable before it, exactly one alert per published donation, none for a held one, counters exact.
 */
for (const dialect of await dialects()) {
  describe(`donations arriving together (${dialect})`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(() => t.drop());

    test('a burst to several streamers: each donation its own answer, its alert as the rules say, the counters exact', async () => {
      const db = t.database.db;
      const plain = await makeUser(db, { currency: 'EUR' });
      const masked = await makeUser(db, { currency: 'USD' });
      await saveModerationSettings(db, masked.id, { ...DEFAULT_SETTINGS, bannedWords: ['crap'], alertDelaySeconds: 30 });
      const approving = await makeUser(db, { currency: 'USD' });
      await saveModerationSettings(db, approving.id, { ...DEFAULT_SETTINGS, approvalRequired: true });
      const goalie = await makeUser(db, { currency: 'USD' });
      const goal = await createGoal(db, goalie.id, { title: 'Mic', goalAmount: 1000 });
      const gone = await makeUser(db, { currency: 'USD' });
      await db.updateTable('users').set({ is_active: 0 }).where('id', '=', gone.id).execute();

      const streamers = [plain, masked, approving, goalie];
      const inputs: NewDonation[] = Array.from({ length: 24 }, (_, i) => ({
        userId: streamers[i % 4]!.id,
        username: i % 5 === 0 ? '' : `Fan "${i}" \\ ü`,
        message: i % 3 === 0 ? 'what crap' : `hello ${i} ❤`,
        amount: `${1 + i}.25`,
        currency: ['USD', 'EUR', 'RUB'][i % 3]!,
        payinSystem: i % 2 ? 'Sandbox' : null,
      }));
      let statements = 0;
      const stop = t.database.onQuery(() => statements++);
      const answers = await Promise.allSettled([...inputs.map((input) => createDonation(db, input)), createDonation(db, { userId: gone.id, amount: '1', currency: 'USD' }), createDonation(db, { userId: 999_999, amount: '1', currency: 'USD' })]);
      stop();
      for (const a of answers.slice(-2)) assert.ok(a.status === 'rejected' && a.reason instanceof NotFoundError, String(a.status === 'rejected' && a.reason));
      const created = answers.slice(0, -2).map((a) => {
        assert.equal(a.status, 'fulfilled', a.status === 'rejected' ? String(a.reason) : '');
        return (a as PromiseFulfilledResult<Awaited<ReturnType<typeof createDonation>>>).value;
      });
      assert.equal(new Set(created.map((d) => d.id)).size, inputs.length, 'every donation has its own id');
      if (dialect === 'postgres') {
        // Six donations go through goals statement by statement; the other 18 share a look-up and one write.
        assert.ok(statements <= 6 * 12 + 4, `batched: ${statements} statements for 26 donations`);
      }

      // Each answer is the stored row, as the API shows it.
      for (const [i, d] of created.entries()) {
        const row = await db.selectFrom('donations').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
        const user = streamers[i % 4]!;
        assert.deepEqual(d, toDonationResource(row, user.name));
        assert.equal(row.user_id, user.id);
        assert.equal(row.username, inputs[i]!.username || 'Anonymous');
      }
      const counters = await db.selectFrom('donation_counters').select(['user_id', 'total']).where('user_id', 'in', streamers.map((s) => s.id)).execute();
      assert.deepEqual(new Map(counters.map((c) => [c.user_id, Number(c.total)])), new Map(streamers.map((s) => [s.id, 6])));

      // Alerts: the plain streamer's as sent, the masked streamer's masked and delayed, none while held.
      const events = await allEvents(db);
      const alerts = events.filter((e) => e.type === 'donation.created');
      assert.equal(alerts.length, 18, 'one alert per published donation; the approving streamer holds six');
      for (const [i, d] of created.entries()) {
        const mine = alerts.filter((e) => e.payload.id === d.id);
        const user = streamers[i % 4]!;
        if (user === approving) {
          assert.equal(mine.length, 0);
          continue;
        }
        assert.equal(mine.length, 1);
        assert.deepEqual(mine[0]!.channels.includes(donationChannel(user.id)), true);
        const expected = { ...d, reason: 'default', ...(user === masked ? { message: d.message.replace('crap', '****') } : {}) };
        assert.deepEqual(mine[0]!.payload, expected);
      }
      const delayed = await db.selectFrom('outbox').select(['payload', 'not_before', 'created_at']).where('type', '=', 'donation.created').where('not_before', 'is not', null).execute();
      assert.equal(delayed.length, 6);
      for (const row of delayed) assert.ok(Math.abs(Number(row.not_before) - Number(row.created_at) - 30_000) < 1000, 'the alert waits out the delay');
      const moderation = await db.selectFrom('donation_moderation').select(['user_id', 'status']).execute();
      assert.deepEqual(moderation.map((m) => `${m.user_id}:${m.status}`).sort(), [...Array(6).fill(`${masked.id}:published`), ...Array(6).fill(`${approving.id}:held`)].sort());
      // The goal counts every one of its streamer's donations, once.
      const raised = created.filter((_, i) => i % 4 === 3).reduce((sum, d) => sum + Math.round(d.amount_in_user_currency * 100), 0);
      assert.equal((await findGoal(db, goal.id))!.raised_amount, raised);
      assert.equal((await eventsOnChannel(db, goalChannel(goalie.id))).filter((e) => e.payload.reason === 'updated').length, 6);
    });

    test('donations from this process and another at once: all stored, each with one alert, the counter exact', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'USD' });
      const other = await otherProcess(t.env);
      try {
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const donation = { userId: user.id, amount: '2', currency: 'USD', username: `race ${i}` };
            return i % 2 ? createDonation(db, donation) : other.call<{ id: number }>('modules/donations/donations.service.js', 'createDonation', donation);
          }),
        );
        const ids = answers.map((a) => a.id);
        assert.equal(new Set(ids).size, 40);
        const stored = await db.selectFrom('donations').select('id').where('user_id', '=', user.id).execute();
        assert.deepEqual(stored.map((r) => r.id).sort((a, b) => a - b), [...ids].sort((a, b) => a - b));
        const counter = await db.selectFrom('donation_counters').select('total').where('user_id', '=', user.id).executeTakeFirstOrThrow();
        assert.equal(Number(counter.total), 40);
        const alerts = (await eventsOnChannel(db, donationChannel(user.id))).map((e) => e.payload.id as number);
        assert.deepEqual([...alerts].sort((a, b) => a - b), [...ids].sort((a, b) => a - b));
      } finally {
        await other.close();
      }
    });
  });
}
