import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConflictError, NotFoundError } from '../../src/domain/errors.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { closePoll, createPoll, getActivePoll, getPoll, listPolls, updatePoll } from '../../src/modules/polls/polls.service.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';

/**
 * What the streamer's own poll reads promise, whoever calls them (dashboard pages, widgets, CLI).
 * Ported from the tests of the former /internal API.
 */
for (const dialect of await dialects()) {
  describe(`reading polls on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    test('the active poll, by id and in lists, is one resource; a second one is refused with what to do', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'EUR' });
      assert.equal(await getActivePoll(db, user.id), null);
      const poll = await createPoll(db, user.id, { title: 'Next game?', options: ['Doom', 'Quake'], type: 'sum', allowUserOptions: true });
      assert.deepEqual({ ...poll, started_at: typeof poll.started_at, options: poll.options.map((o) => o.title) }, {
        id: poll.id, is_active: 1, title: 'Next game?', allow_user_options: 1, type: 'sum', options: ['Doom', 'Quake'], currency: 'EUR', started_at: 'string', ended_at: null,
      });
      await assert.rejects(createPoll(db, user.id, { title: 'Another', options: ['a', 'b'] }), (err: unknown) => err instanceof ConflictError && /close it/.test(err.message));

      await updatePoll(db, user.id, poll.id, { title: 'Next game!', addOptions: ['Half-Life'] });
      await createDonation(db, { userId: user.id, amount: 10, currency: 'EUR', pollOptionTitle: 'half-life' });
      const active = (await getActivePoll(db, user.id))!;
      assert.deepEqual(active.options.map((o) => [o.title, o.amount_value, o.is_winner]), [['Doom', 0, 0], ['Quake', 0, 0], ['Half-Life', 10, 1]]);
      assert.deepEqual(await getPoll(db, poll.id, { userId: user.id }), active);
      assert.deepEqual(await listPolls(db, user.id, { state: 'active' }), [active]);

      const closed = await closePoll(db, poll.id, { userId: user.id });
      assert.equal(await getActivePoll(db, user.id), null);
      assert.deepEqual(await listPolls(db, user.id, { state: 'finished' }), [closed]);
      assert.deepEqual(await listPolls(db, user.id, { state: 'active' }), []);
    });

    test("another streamer's poll is not found, to read, edit or close; their active poll stays theirs", async () => {
      const db = t.database.db;
      const owner = await makeUser(db);
      const stranger = await makeUser(db);
      const theirs = await createPoll(db, owner.id, { title: 'Mine', options: ['a', 'b'] });
      await assert.rejects(getPoll(db, theirs.id, { userId: stranger.id }), NotFoundError);
      await assert.rejects(updatePoll(db, stranger.id, theirs.id, { title: 'Stolen' }), NotFoundError);
      await assert.rejects(closePoll(db, theirs.id, { userId: stranger.id }), NotFoundError);
      assert.equal(await getActivePoll(db, stranger.id), null);
      assert.equal((await getActivePoll(db, owner.id))!.id, theirs.id);
    });
  });
}
