import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NotFoundError } from '../../src/domain/errors.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { DEFAULT_SETTINGS } from '../../src/modules/moderation/moderation.service.js';
import { donationChannel } from '../../src/modules/outbox/channels.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { otherProcess, type OtherProcess } from '../other-process.js';

/**
 * PostgreSQL keeps the streamer contexts it decided donations on (donations.service.ts), and the
 * write checks each against the database in its own snapshot. Every test here donates once so the
 * context is known, changes it from ANOTHER process (its own connection; nothing in this process
 * hears of it), then donates again: a cache that missed the change would decide the second
 * donation on the old context. SQLite reads the context in the donation's own transaction; the
 * contract is the same on both.
 */
for (const dialect of await dialects()) {
  describe(`a donation is never decided on a streamer context a committed write changed (${dialect})`, () => {
    let t: TestDatabase;
    let other: OtherProcess;
    before(async () => {
      t = await openTestDatabase(dialect);
      other = await otherProcess(t.env);
    });
    after(async () => {
      await other.close();
      await t.drop();
    });

    const donate = (userId: number, username = 'Fan', extra: { message?: string; currency?: string; amount?: string } = {}) =>
      createDonation(t.database.db, { userId, amount: extra.amount ?? '5', currency: extra.currency ?? 'USD', username, message: extra.message ?? 'hello' });
    const alerts = async (userId: number) => (await eventsOnChannel(t.database.db, donationChannel(userId))).map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload));

    test('a known streamer’s donation costs one statement, and its moderation settings saved elsewhere count from the next donation', async () => {
      const streamer = await makeUser(t.database.db, { currency: 'USD' });
      await donate(streamer.id, 'first');
      let statements = 0;
      const stop = t.database.onQuery(() => statements++);
      await donate(streamer.id, 'second');
      stop();
      // PostgreSQL: the write alone, its context known; SQLite: its transaction's statements, all in one turn.
      if (dialect === 'postgres') assert.equal(statements, 1, 'a known streamer: no look-up before the write');

      await other.call('modules/moderation/moderation.service.ts', 'saveModerationSettings', streamer.id, { ...DEFAULT_SETTINGS, bannedWords: ['hello'], bannedWordsMode: 'mask' });
      statements = 0;
      const again = t.database.onQuery(() => statements++);
      const masked = await donate(streamer.id, 'third');
      again();
      // PostgreSQL: the write on the old context wrote nothing; the context read again; the write.
      if (dialect === 'postgres') assert.equal(statements, 3);
      await other.call('modules/moderation/moderation.service.ts', 'saveModerationSettings', streamer.id, { ...DEFAULT_SETTINGS, approvalRequired: true });
      const held = await donate(streamer.id, 'fourth');

      const byId = new Map((await alerts(streamer.id)).map((a) => [a.id, a]));
      assert.equal(byId.size, 3, 'the held donation has no alert');
      assert.equal(byId.get(masked.id).message, '*****', 'the banned word saved by the other process is masked');
      assert.equal(byId.has(held.id), false, 'approval required by the other process holds the alert');
      const moderation = await t.database.db.selectFrom('donation_moderation').select(['donation_id', 'status']).where('user_id', '=', streamer.id).execute();
      assert.deepEqual(moderation.map((m) => [Number(m.donation_id), m.status]).sort(), [[masked.id, 'published'], [held.id, 'held']].sort());
    });

    test('a name, a currency and a rate changed elsewhere are the next donation’s', async () => {
      const streamer = await makeUser(t.database.db, { currency: 'USD' });
      await donate(streamer.id);
      await other.call('modules/accounts/accounts.repository.ts', 'updateUser', streamer.id, { name: 'Renamed Elsewhere', currency: 'EUR' });
      const renamed = await donate(streamer.id, 'after rename', { amount: '10', currency: 'USD' });
      assert.equal(renamed.recipient_name, 'Renamed Elsewhere');
      const eurPerUsd = Number((await t.database.db.selectFrom('currency_rates').select('per_usd').where('currency', '=', 'EUR').executeTakeFirstOrThrow()).per_usd);
      const stored = async (id: number) => t.database.db.selectFrom('donations').select(['user_currency', 'amount_in_user_currency']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual({ ...(await stored(renamed.id)), amount_in_user_currency: Number((await stored(renamed.id)).amount_in_user_currency) }, { user_currency: 'EUR', amount_in_user_currency: Math.round(1000 * eurPerUsd) });

      await other.call('modules/currencies/currencies.service.ts', 'setRate', 'EUR', eurPerUsd * 2);
      const afterRate = await donate(streamer.id, 'after rate', { amount: '10', currency: 'USD' });
      assert.equal(Number((await stored(afterRate.id)).amount_in_user_currency), Math.round(1000 * eurPerUsd * 2), 'the rate saved by the other process converts the next donation');
      await other.call('modules/currencies/currencies.service.ts', 'setRate', 'EUR', eurPerUsd);
    });

    test('a streamer disabled elsewhere takes no more donations, and one enabled again takes them', async () => {
      const streamer = await makeUser(t.database.db);
      await donate(streamer.id);
      await other.call('modules/accounts/accounts.repository.ts', 'updateUser', streamer.id, { is_active: 0 });
      await assert.rejects(donate(streamer.id, 'while disabled'), NotFoundError);
      await other.call('modules/accounts/accounts.repository.ts', 'updateUser', streamer.id, { is_active: 1 });
      await donate(streamer.id, 'enabled again');
      const names = (await t.database.db.selectFrom('donations').select('username').where('user_id', '=', streamer.id).orderBy('id').execute()).map((r) => r.username);
      assert.deepEqual(names, ['Fan', 'enabled again']);
    });

    test('a goal started elsewhere is raised by the next donation', async () => {
      const streamer = await makeUser(t.database.db, { currency: 'USD' });
      await donate(streamer.id);
      const goal = await other.call<{ id: number }>('modules/goals/goals.service.ts', 'createGoal', streamer.id, { title: 'Mic', goalAmount: 1000 });
      await donate(streamer.id, 'for the goal', { amount: '7' });
      const raised = await t.database.db.selectFrom('goals').select('raised_amount').where('id', '=', goal.id).executeTakeFirstOrThrow();
      assert.equal(Number(raised.raised_amount), 700);
    });
  });
}
