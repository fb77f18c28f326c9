import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConflictError, NotFoundError, ValidationError } from '../../src/domain/errors.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { pollChannel } from '../../src/modules/outbox/channels.js';
import { closePoll, createPoll, getActivePoll, getPoll, listPolls, updatePoll } from '../../src/modules/polls/polls.service.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { count, outbox, setTestRates } from '../goals/fixture.js';
import { otherProcess } from '../other-process.js';

const option = (id: number, title: string, amount_value: number, amount_percent: number, is_winner: number) => ({ id, title, amount_value, amount_percent, is_winner });

for (const dialect of await dialects()) {
  describe(`polls on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
      await setTestRates(t.database.db);
    });
    after(async () => t.drop());

    const nothingWritten = async (attempt: () => Promise<unknown>, field: string) => {
      const db = t.database.db;
      const before = await Promise.all([count(db, 'donations'), count(db, 'outbox'), count(db, 'poll_options')]);
      const votes = await db.selectFrom('poll_options').select(['id', 'votes', 'amount_sum']).orderBy('id').execute();
      await assert.rejects(attempt(), (err: unknown) => err instanceof ValidationError && field in err.errors, field);
      assert.deepEqual(await Promise.all([count(db, 'donations'), count(db, 'outbox'), count(db, 'poll_options')]), before);
      assert.deepEqual(await db.selectFrom('poll_options').select(['id', 'votes', 'amount_sum']).orderBy('id').execute(), votes);
    };

    test('creating a poll queues `created` with the poll, its options and nothing else', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'EUR' });
      const poll = await createPoll(db, user.id, { title: 'Next game?', options: [' Doom ', 'Quake'] });
      const [a, b] = poll.options.map((o) => o.id);
      assert.equal(poll.currency, 'EUR');
      const events = await outbox(db, pollChannel(user.id));
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.payload, {
        id: poll.id,
        is_active: 1,
        title: 'Next game?',
        allow_user_options: 0,
        type: 'count',
        options: [option(a!, 'Doom', 0, 0, 0), option(b!, 'Quake', 0, 0, 0)],
        reason: 'created',
      });
      assert.deepEqual(Object.keys(events[0]!.payload), ['id', 'is_active', 'title', 'allow_user_options', 'type', 'options', 'reason']);
    });

    test('bad polls are validation errors; a second active poll is a conflict, also when two creates race', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const fieldsOf = async (input: Parameters<typeof createPoll>[2]) => {
        try {
          await createPoll(db, user.id, input);
          return [];
        } catch (err) {
          assert.ok(err instanceof ValidationError);
          return Object.keys(err.errors);
        }
      };
      assert.deepEqual(await fieldsOf({ title: '', options: ['a', 'b'] }), ['title']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: ['a'] }), ['options']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: ['a', 'A'] }), ['options']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: 'a,b' }), ['options']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: ['a', 'b'], type: 'most' }), ['type']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: ['a', 'b'], currency: 'XXX' }), ['currency']);
      assert.deepEqual(await fieldsOf({ title: 'T', options: ['a', 'b'], allowUserOptions: 'yes' }), ['allow_user_options']);
      assert.equal(await count(db, 'polls'), (await db.selectFrom('polls').select('id').where('user_id', '!=', user.id).execute()).length);

      const other = await otherProcess(t.env);
      try {
        const results = await Promise.allSettled(
          [0, 1, 2, 3].map((i) => {
            const input = { title: `Race ${i}`, options: ['a', 'b'] };
            return i % 2 ? other.call('modules/polls/polls.service.js', 'createPoll', user.id, input) : createPoll(db, user.id, input);
          }),
        );
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError || r.reason.name === 'ConflictError', String(r.reason));
      } finally {
        await other.close();
      }
      assert.equal((await listPolls(db, user.id, { state: 'active' })).length, 1);
      assert.equal((await outbox(db, pollChannel(user.id))).length, 1);
    });

    test('votes by option id: count and sum polls, sums converted into the poll currency; the donation records its option', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'USD' });
      const poll = await createPoll(db, user.id, { title: 'Sum', type: 'sum', options: ['Red', 'Blue', 'Green'], currency: 'EUR' });
      const [red, blue, green] = poll.options.map((o) => o.id) as [number, number, number];
      await createDonation(db, { userId: user.id, amount: 10, currency: 'USD', pollOptionId: red }); // 8 EUR
      await createDonation(db, { userId: user.id, amount: 1, currency: 'USD', pollOptionId: blue }); // 0.80 EUR
      await createDonation(db, { userId: user.id, amount: 1, currency: 'USD', pollOptionId: blue });
      const donation = await createDonation(db, { userId: user.id, amount: 360, currency: 'RUB', pollOptionId: green }); // 4 USD = 3.20 EUR
      const stored = await db.selectFrom('donations').select('poll_option_id').where('id', '=', donation.id).executeTakeFirstOrThrow();
      assert.equal(stored.poll_option_id, green);

      const events = await outbox(db, pollChannel(user.id));
      assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'updated', 'updated']);
      assert.deepEqual(events[4]!.payload, {
        id: poll.id,
        is_active: 1,
        title: 'Sum',
        allow_user_options: 0,
        type: 'sum',
        options: [option(red, 'Red', 8, 62.5, 1), option(blue, 'Blue', 1.6, 12.5, 0), option(green, 'Green', 3.2, 25, 0)],
        reason: 'updated',
      });
      // The same votes counted by number of donations: Blue leads.
      const asCount = await updatePoll(db, user.id, poll.id, { type: 'count' });
      assert.deepEqual(asCount.options, [option(red, 'Red', 1, 25, 0), option(blue, 'Blue', 2, 50, 1), option(green, 'Green', 1, 25, 0)]);
    });

    test('votes by title: an existing title (any case) counts for it; a new one is added where allowed, once', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const poll = await createPoll(db, user.id, { title: 'Open', options: ['Doom', 'Quake'], allowUserOptions: true });
      await createDonation(db, { userId: user.id, amount: 2, currency: 'USD', pollOptionTitle: '  Half   Life ' });
      await createDonation(db, { userId: user.id, amount: 2, currency: 'USD', pollOptionTitle: 'HALF LIFE' });
      await createDonation(db, { userId: user.id, amount: 2, currency: 'USD', pollOptionTitle: 'doom' });
      const now = await getPoll(db, poll.id);
      const [doom, quake, half] = now.options;
      assert.deepEqual(now.options, [option(doom!.id, 'Doom', 1, 33.33, 0), option(quake!.id, 'Quake', 0, 0, 0), option(half!.id, 'Half Life', 2, 66.67, 1)]);
      const last = (await outbox(db, pollChannel(user.id))).at(-1)!;
      assert.deepEqual(last.payload, { id: poll.id, is_active: 1, title: 'Open', allow_user_options: 1, type: 'count', options: now.options, reason: 'updated' });

      // Ties: several winners.
      await createDonation(db, { userId: user.id, amount: 2, currency: 'USD', pollOptionId: doom!.id });
      assert.deepEqual((await getPoll(db, poll.id)).options.map((o) => o.is_winner), [1, 0, 1]);

      // Many donors typing the same new title at once still make one option.
      const other = await otherProcess(t.env);
      try {
        await Promise.all(
          ['Pizza', 'PIZZA', ' pizza', 'piZZa', 'Pizza '].map((title, i) => {
            const donation = { userId: user.id, amount: 1, currency: 'USD', pollOptionTitle: title };
            return i % 2 ? other.call('modules/donations/donations.service.js', 'createDonation', donation) : createDonation(db, donation);
          }),
        );
      } finally {
        await other.close();
      }
      const pizza = (await getPoll(db, poll.id)).options.filter((o) => o.title.toLowerCase() === 'pizza');
      assert.equal(pizza.length, 1);
      assert.equal(pizza[0]!.amount_value, 5);
      assert.equal(pizza[0]!.is_winner, 1);
    });

    test('a bad vote rejects the whole donation: nothing is written', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const donate = (vote: { pollOptionId?: number; pollOptionTitle?: string }) => () => createDonation(db, { userId: user.id, amount: 5, currency: 'USD', ...vote });
      await nothingWritten(donate({ pollOptionId: 1 }), 'poll_option_id'); // no active poll
      await nothingWritten(donate({ pollOptionTitle: 'Anything' }), 'poll_option_title');

      const closedOne = await createPoll(db, user.id, { title: 'Old', options: ['x', 'y'] });
      await closePoll(db, closedOne.id);
      const poll = await createPoll(db, user.id, { title: 'Closed to new options', options: ['Yes', 'No'] });
      const stranger = await makeUser(db);
      const strangersPoll = await createPoll(db, stranger.id, { title: 'Theirs', options: ['a', 'b'] });
      await nothingWritten(donate({ pollOptionId: strangersPoll.options[0]!.id }), 'poll_option_id');
      await nothingWritten(donate({ pollOptionId: closedOne.options[0]!.id }), 'poll_option_id');
      await nothingWritten(donate({ pollOptionId: 99999999 }), 'poll_option_id');
      await nothingWritten(donate({ pollOptionTitle: 'Maybe' }), 'poll_option_title');
      await nothingWritten(donate({ pollOptionTitle: '   ' }), 'poll_option_title');
      await nothingWritten(donate({ pollOptionTitle: 'x'.repeat(101) }), 'poll_option_title');
      await nothingWritten(donate({ pollOptionId: poll.options[0]!.id, pollOptionTitle: 'Yes' }), 'poll_option_id');
      await nothingWritten(() => createDonation(db, { userId: user.id, amount: 5, currency: 'USD', pollOptionId: 1.5 }), 'poll_option_id');
      // A valid vote still works afterwards, and an existing title votes even though the poll takes no new ones.
      await createDonation(db, { userId: user.id, amount: 5, currency: 'USD', pollOptionTitle: 'yes' });
      assert.equal((await getPoll(db, poll.id)).options[0]!.amount_value, 1);
    });

    test('editing adds options and changes the title, type and flag; closing queues `finished` with the winners once', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const poll = await createPoll(db, user.id, { title: 'Edit', options: ['A', 'B'] });
      const edited = await updatePoll(db, user.id, poll.id, { title: 'Edited', allowUserOptions: 1, addOptions: ['C', 'a', 'C '] });
      assert.deepEqual(edited.options.map((o) => o.title), ['A', 'B', 'C']);
      assert.equal(edited.allow_user_options, 1);
      await assert.rejects(updatePoll(db, user.id, poll.id, { addOptions: ['x'.repeat(101)] }), ValidationError);
      await assert.rejects(updatePoll(db, user.id, poll.id, { type: 'median' }), ValidationError);
      const stranger = await makeUser(db);
      await assert.rejects(updatePoll(db, stranger.id, poll.id, { title: 'Mine' }), NotFoundError);
      await assert.rejects(closePoll(db, poll.id, { userId: stranger.id }), NotFoundError);

      await createDonation(db, { userId: user.id, amount: 1, currency: 'USD', pollOptionId: edited.options[2]!.id });
      const closed = await closePoll(db, poll.id, { userId: user.id });
      assert.equal(closed.is_active, 0);
      assert.deepEqual(await closePoll(db, poll.id), closed, 'closing again changes nothing');
      assert.equal(await getActivePoll(db, user.id), null);
      const events = await outbox(db, pollChannel(user.id));
      assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'finished']);
      const { currency: _c, started_at: _s, ended_at: _e, ...resource } = closed;
      assert.deepEqual(events[3]!.payload, { ...resource, reason: 'finished' });
      assert.deepEqual(closed.options.map((o) => o.is_winner), [0, 0, 1]);
      await assert.rejects(updatePoll(db, user.id, poll.id, { title: 'Late' }), ConflictError);
      // A new poll may start once the old one has ended.
      assert.equal((await createPoll(db, user.id, { title: 'Next', options: ['1', '2'] })).is_active, 1);
      assert.deepEqual((await listPolls(db, user.id)).map((p) => p.title), ['Next', 'Edited']);
    });
  });
}
