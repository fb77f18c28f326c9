import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDonation, type NewDonation } from '../../src/modules/donations/donations.service.js';
import { DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';

/**
 * createDonation's own ways of recording a donation without a vote — on SQLite one transaction run
 * within the call's turn (`transactNow`), on PostgreSQL the group commit — write what the
 * statement-by-statement way does in a caller's transaction: the same donation, moderation row and
 * alert, byte for byte on the wire but for the id and the time.
 */
for (const dialect of await dialects()) {
  describe(`a donation recorded createDonation's own way and in a caller's transaction (${dialect})`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(() => t.drop());

    /** What was written for donation `id`, with its id and times taken out. */
    async function written(id: number) {
      const db = t.database.db;
      const donation = await db.selectFrom('donations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const moderation = await db.selectFrom('donation_moderation').selectAll().where('donation_id', '=', id).executeTakeFirst();
      const alerts = await db.selectFrom('outbox').selectAll().where('type', '=', 'donation.created').execute();
      const alert = alerts.find((a) => JSON.parse(a.payload).id === id);
      const { id: _d, created_at: donatedAt, ...rest } = donation;
      return {
        donation: rest,
        moderation: moderation && { ...moderation, donation_id: 0, publish_at: moderation.publish_at === null ? null : Number(moderation.publish_at) - Number(donatedAt) },
        alert: alert && {
          type: alert.type,
          user_id: alert.user_id,
          channels: alert.channels,
          // The payload's text as the relay publishes it, with its id and time as the other's.
          payload: alert.payload.replace(`{"id":${id},`, '{"id":0,').replace(/"created_at":"[^"]+"/, '"created_at":""'),
          delay: alert.not_before === null ? null : Number(alert.not_before) - Number(donatedAt),
        },
      };
    }

    test('plain, masked and delayed, below the minimum, held: the same rows and alert either way', async () => {
      const db = t.database.db;
      const commits: number[] = [];
      const stop = t.database.onCommit(() => commits.push(1));
      try {
        const plain = await makeUser(db, { currency: 'EUR' });
        const ruled = await makeUser(db, { currency: 'USD' });
        await saveModerationSettings(db, ruled.id, { ...DEFAULT_SETTINGS, bannedWords: ['crap'], links: 'remove', alertDelaySeconds: 30, minMessageAmount: 300 });
        const holding = await makeUser(db, { currency: 'USD' });
        await saveModerationSettings(db, holding.id, { ...DEFAULT_SETTINGS, approvalRequired: true });
        const inputs: NewDonation[] = [
          { userId: plain.id, username: 'Fan "1" \\ ü', message: 'hello ❤ <b>', amount: '5.25', currency: 'RUB', payinSystem: 'Sandbox' },
          { userId: plain.id, amount: '1', currency: 'EUR', messageType: 'audio' },
          { userId: ruled.id, username: 'crap', message: 'what crap https://example.test/x', amount: '10', currency: 'EUR' },
          { userId: ruled.id, username: 'Small', message: 'below the minimum', amount: '2', currency: 'USD' },
          { userId: holding.id, username: 'Held', message: 'wait for it', amount: '3', currency: 'USD' },
        ];
        for (const input of inputs) {
          commits.length = 0;
          const own = createDonation(db, input);
          // SQLite: committed, and its alert handed to the relay, before the call returned.
          if (dialect === 'sqlite') assert.equal(commits.length, 1, 'committed within the call');
          const ownWay = await own;
          const inTransaction = await db.transaction().execute((tx) => createDonation(tx, input));
          assert.deepEqual({ ...ownWay, id: 0, created_at: '' }, { ...inTransaction, id: 0, created_at: '' });
          assert.deepEqual(await written(ownWay.id), await written(inTransaction.id));
        }
        const held = await written((await createDonation(db, inputs[4]!)).id);
        assert.equal(held.alert, undefined, 'a held donation has no alert');
        assert.equal(held.moderation?.status, 'held');
      } finally {
        stop();
      }
    });
  });
}
