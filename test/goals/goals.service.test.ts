import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatDateTime } from '../../src/domain/datetime.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/domain/errors.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { closeExpiredGoalRows, findGoal } from '../../src/modules/goals/goals.repository.js';
import { closeGoal, createGoal, expireGoals, getGoal, listGoals, updateGoal } from '../../src/modules/goals/goals.service.js';
import type { GoalRow } from '../../src/modules/goals/goals.table.js';
import { goalChannel } from '../../src/modules/outbox/channels.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { otherProcess } from '../other-process.js';
import { backdateGoal, count, daysFromNow, failDonationsNamedBoom, outbox, secondPool, setTestRates } from './fixture.js';

const FUTURE = daysFromNow(30);
const LATER = daysFromNow(60);

/** The spec §2 "Donation goal" payload plus reason, exactly, from the stored row. */
function expectedPayload(row: GoalRow, reason: string) {
  return {
    id: row.id,
    is_active: row.is_active,
    title: row.title,
    currency: row.currency,
    start_amount: row.start_amount / 100,
    raised_amount: row.raised_amount / 100,
    goal_amount: row.goal_amount / 100,
    started_at: formatDateTime(row.started_at),
    expires_at: row.expires_at === null ? null : formatDateTime(row.expires_at),
    reason,
  };
}

for (const dialect of await dialects()) {
  describe(`goals on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
      await setTestRates(t.database.db);
      await failDonationsNamedBoom(t);
    });
    after(async () => t.drop());

    test('creating a goal stores it with raised = start and queues `created` with exactly the spec fields', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'EUR' });
      const expiresAt = FUTURE;
      const goal = await createGoal(db, user.id, { title: 'New microphone', goalAmount: '150', startAmount: 20.5, expiresAt });
      assert.equal(goal.currency, 'EUR', "the streamer's main currency by default");
      assert.equal(goal.raised_amount, 20.5);
      assert.equal(goal.expires_at, expiresAt);
      const row = (await findGoal(db, goal.id))!;
      const events = await outbox(db, goalChannel(user.id));
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.payload, expectedPayload(row, 'created'));
      assert.deepEqual(Object.keys(events[0]!.payload), ['id', 'is_active', 'title', 'currency', 'start_amount', 'raised_amount', 'goal_amount', 'started_at', 'expires_at', 'reason']);
      await assert.rejects(createGoal(db, user.id, { title: 'Bad', goalAmount: 10, startAmount: 10 }), ValidationError);
      assert.equal((await outbox(db, goalChannel(user.id))).length, 1, 'a rejected goal queues nothing');
    });

    test('a donation raises every active goal in its own currency and queues `updated` for each, in its transaction', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'USD' });
      const usd = await createGoal(db, user.id, { title: 'USD goal', goalAmount: 100, startAmount: 5 });
      const eur = await createGoal(db, user.id, { title: 'EUR goal', goalAmount: 100, currency: 'EUR' });
      const kzt = await createGoal(db, user.id, { title: 'KZT goal', goalAmount: 100000, currency: 'KZT' });
      const closed = await createGoal(db, user.id, { title: 'Closed', goalAmount: 100 });
      await closeGoal(db, closed.id, { userId: user.id });
      const other = await makeUser(db);
      const othersGoal = await createGoal(db, other.id, { title: 'Not mine', goalAmount: 100 });
      const before = (await outbox(db)).length;

      await createDonation(db, { userId: user.id, amount: '10', currency: 'EUR', username: 'Ann' });

      const rows = await Promise.all([usd, eur, kzt, closed, othersGoal].map((g) => findGoal(db, g.id)));
      assert.deepEqual(rows.map((r) => r!.raised_amount), [500 + 1250, 1000, 562500, 0, 0]); // 10 EUR = 12.50 USD = 5625 KZT
      const events = (await outbox(db)).slice(before);
      assert.deepEqual(events.map((e) => e.channels), [[goalChannel(user.id)], [goalChannel(user.id)], [goalChannel(user.id)], [`$alerts:donation_${user.id}`, `$widget:alerts_${user.id}`]]);
      assert.deepEqual(events.slice(0, 3).map((e) => e.payload), [rows[0]!, rows[1]!, rows[2]!].map((r) => expectedPayload(r, 'updated')));
    });

    test('a donation that fails after raising the goals rolls the goals and their events back', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const goal = await createGoal(db, user.id, { title: 'Atomic', goalAmount: 100 });
      const [outboxBefore, donationsBefore] = [await count(db, 'outbox'), await count(db, 'donations')];
      await assert.rejects(createDonation(db, { userId: user.id, amount: 10, currency: 'USD', username: 'boom' }), /boom/);
      assert.equal((await findGoal(db, goal.id))!.raised_amount, 0);
      assert.equal(await count(db, 'outbox'), outboxBefore);
      assert.equal(await count(db, 'donations'), donationsBefore);
      await assert.rejects(createDonation(db, { userId: user.id, amount: 10, currency: 'USD', pollOptionId: 999999 }), ValidationError);
      assert.equal((await findGoal(db, goal.id))!.raised_amount, 0, 'a rejected vote writes nothing either');
      assert.equal(await count(db, 'outbox'), outboxBefore);
    });

    test('editing: amounts and title change, start_amount shifts raised, `updated` is queued; ended goals refuse (409)', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const goal = await createGoal(db, user.id, { title: 'Edit me', goalAmount: 100, startAmount: 10 });
      await createDonation(db, { userId: user.id, amount: 5, currency: 'USD' });
      const edited = await updateGoal(db, user.id, goal.id, { title: 'Edited', startAmount: 0, goalAmount: '250.75', expiresAt: `${LATER.replace(' ', 'T')}Z` });
      assert.deepEqual([edited.title, edited.start_amount, edited.raised_amount, edited.goal_amount, edited.expires_at], ['Edited', 0, 5, 250.75, LATER]);
      const cleared = await updateGoal(db, user.id, goal.id, { expiresAt: null });
      assert.equal(cleared.expires_at, null);
      const events = await outbox(db, goalChannel(user.id));
      assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'updated']);
      assert.deepEqual(events[3]!.payload, expectedPayload((await findGoal(db, goal.id))!, 'updated'));

      const outboxBefore = await count(db, 'outbox');
      await assert.rejects(updateGoal(db, user.id, goal.id, { goalAmount: 0 }), ValidationError);
      await assert.rejects(updateGoal(db, user.id, goal.id, { startAmount: 300 }), (err: unknown) => err instanceof ValidationError && 'goal_amount' in err.errors);
      await assert.rejects(updateGoal(db, user.id, goal.id, { title: '' }), ValidationError);
      assert.equal(await count(db, 'outbox'), outboxBefore);
      assert.equal((await findGoal(db, goal.id))!.title, 'Edited');

      const stranger = await makeUser(db);
      await assert.rejects(updateGoal(db, stranger.id, goal.id, { title: 'Mine now' }), NotFoundError);
      await assert.rejects(closeGoal(db, goal.id, { userId: stranger.id }), NotFoundError);
      await closeGoal(db, goal.id, { userId: user.id });
      await assert.rejects(updateGoal(db, user.id, goal.id, { title: 'Too late' }), ConflictError);
    });

    test('closing queues `finished` once; an ended goal no longer takes donations', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const goal = await createGoal(db, user.id, { title: 'Close me', goalAmount: 100 });
      const closed = await closeGoal(db, goal.id);
      assert.equal(closed.is_active, 0);
      assert.ok(closed.ended_at);
      const again = await closeGoal(db, goal.id, { userId: user.id });
      assert.deepEqual(again, closed);
      await createDonation(db, { userId: user.id, amount: 10, currency: 'USD' });
      const row = (await findGoal(db, goal.id))!;
      assert.equal(row.raised_amount, 0);
      const events = await outbox(db, goalChannel(user.id));
      assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'finished']);
      assert.deepEqual(events[1]!.payload, expectedPayload(row, 'finished'));
      await assert.rejects(closeGoal(db, 999999), NotFoundError);
    });

    test('an expired goal ends lazily — on a donation, a read or a list — at its expires_at, with one `finished`', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const a = await createGoal(db, user.id, { title: 'Ends before the donation', goalAmount: 100, expiresAt: FUTURE });
      const b = await createGoal(db, user.id, { title: 'Still running', goalAmount: 100, expiresAt: FUTURE });
      const past = Date.now() - 60_000;
      await backdateGoal(db, a.id, past);
      await createDonation(db, { userId: user.id, amount: 10, currency: 'USD' });
      const [rowA, rowB] = [(await findGoal(db, a.id))!, (await findGoal(db, b.id))!];
      assert.deepEqual([rowA.is_active, rowA.raised_amount, rowA.ended_at], [0, 0, past]);
      assert.deepEqual([rowB.is_active, rowB.raised_amount], [1, 1000]);
      const events = await outbox(db, goalChannel(user.id));
      assert.deepEqual(events.map((e) => [e.payload.id, e.payload.reason]), [[a.id, 'created'], [b.id, 'created'], [a.id, 'finished'], [b.id, 'updated']]);
      assert.deepEqual(events[2]!.payload, expectedPayload(rowA, 'finished'));

      await backdateGoal(db, b.id, past);
      assert.equal((await getGoal(db, b.id)).is_active, 0, 'read');
      const c = await createGoal(db, user.id, { title: 'Listed', goalAmount: 100, expiresAt: FUTURE });
      await backdateGoal(db, c.id, past);
      assert.deepEqual((await listGoals(db, user.id, { state: 'active' })).map((g) => g.id), [], 'list');
      assert.deepEqual((await listGoals(db, user.id)).map((g) => g.id), [c.id, b.id, a.id]);
      const finished = (await outbox(db, goalChannel(user.id))).filter((e) => e.payload.reason === 'finished');
      assert.deepEqual(finished.map((e) => e.payload.id), [a.id, b.id, c.id]);
      await assert.rejects(updateGoal(db, user.id, c.id, { title: 'x' }), ConflictError);
    });

    test('concurrent sweepers in separate processes end each expired goal exactly once, with one `finished` each', async () => {
      const db = t.database.db;
      const others = await Promise.all([otherProcess(t.env), otherProcess(t.env), otherProcess(t.env)]);
      try {
        const user = await makeUser(db);
        for (let round = 0; round < 3; round++) {
          const ids: number[] = [];
          for (let i = 0; i < 15; i++) ids.push((await createGoal(db, user.id, { title: `Sweep ${round}.${i}`, goalAmount: 10, expiresAt: FUTURE })).id);
          const stillRunning = await createGoal(db, user.id, { title: `Not due ${round}`, goalAmount: 10, expiresAt: FUTURE });
          const due = Date.now() - 1000;
          await db.updateTable('goals').set({ expires_at: due }).where('id', 'in', ids).execute();
          const results = await Promise.all([expireGoals(db), ...others.map((o) => o.call<GoalRow[]>('modules/goals/goals.service.js', 'expireGoals'))]);
          const ended = results.flat().map((g) => g.id).sort((x, y) => x - y);
          assert.deepEqual(ended, ids, `round ${round}: every due goal ended by exactly one sweeper`);
          const finished = (await outbox(db, goalChannel(user.id))).filter((e) => e.payload.reason === 'finished' && ids.includes(e.payload.id as number));
          assert.equal(finished.length, ids.length);
          assert.equal((await findGoal(db, stillRunning.id))!.is_active, 1);
          await closeGoal(db, stillRunning.id);
        }
        assert.deepEqual(await expireGoals(db), [], 'nothing left to sweep');
      } finally {
        await Promise.all(others.map((o) => o.close()));
      }
    });

    // Needs two connections that block each other on a row lock: PostgreSQL only (on SQLite, two
    // connections in one process deadlock until the busy timeout).
    if (dialect === 'postgres') {
      test('a sweeper blocked behind another one\'s uncommitted close ends nothing (the UPDATE decides)', async () => {
        const db = t.database.db;
        const other = secondPool(t);
        try {
          const user = await makeUser(db);
          const goal = await createGoal(db, user.id, { title: 'Contested', goalAmount: 10, expiresAt: FUTURE });
          await backdateGoal(db, goal.id, Date.now() - 1000);
          let release!: () => void;
          const held = new Promise<void>((r) => (release = r));
          let rowsA: GoalRow[] = [];
          const sweeperA = db.transaction().execute(async (tx) => {
            rowsA = await closeExpiredGoalRows(tx, Date.now());
            await held;
          });
          while (rowsA.length === 0) await new Promise((r) => setTimeout(r, 5));
          let bDone = false;
          const sweeperB = expireGoals(other.db).then((rows) => ((bDone = true), rows));
          await new Promise((r) => setTimeout(r, 300));
          assert.equal(bDone, false, 'B waits for the row lock');
          release();
          await sweeperA;
          assert.deepEqual(await sweeperB, [], 'after A commits, B finds the goal already ended');
          assert.deepEqual(rowsA.map((g) => g.id), [goal.id]);
          assert.equal((await outbox(db, goalChannel(user.id))).filter((e) => e.payload.reason === 'finished').length, 0, 'this test bypassed the service for A');
        } finally {
          await other.close();
        }
      });
    }

    test('concurrent donations from two processes add up exactly', async () => {
      const db = t.database.db;
      const other = await otherProcess(t.env);
      try {
        const user = await makeUser(db);
        const goal = await createGoal(db, user.id, { title: 'Race', goalAmount: 1000 });
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => {
            const donation = { userId: user.id, amount: '1.25', currency: 'USD' };
            return i % 2 ? createDonation(db, donation) : other.call('modules/donations/donations.service.js', 'createDonation', donation);
          }),
        );
        assert.equal((await findGoal(db, goal.id))!.raised_amount, 2500);
        const updates = (await outbox(db, goalChannel(user.id))).filter((e) => e.payload.reason === 'updated');
        assert.deepEqual(updates.map((e) => e.payload.raised_amount).sort((x, y) => (x as number) - (y as number)), Array.from({ length: 20 }, (_, i) => (i + 1) * 1.25));
      } finally {
        await other.close();
      }
    });
  });
}
