import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NotFoundError } from '../../src/domain/errors.js';
import { closeGoal, createGoal, getGoal, listGoals, updateGoal } from '../../src/modules/goals/goals.service.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { daysFromNow } from './fixture.js';

/**
 * What the streamer's own reads promise — the resource, its owner, the list filters — whoever
 * calls them (dashboard pages, widgets, CLI). Ported from the tests of the former /internal API.
 */
for (const dialect of await dialects()) {
  describe(`reading goals on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    test('a goal reads back as the spec resource plus ended_at, the same by id, in lists and after edits', async () => {
      const db = t.database.db;
      const user = await makeUser(db, { currency: 'EUR' });
      const expiresAt = daysFromNow(7);
      const goal = await createGoal(db, user.id, { title: 'New camera', goalAmount: '300.50', startAmount: 20, expiresAt });
      assert.deepEqual(
        { ...goal, started_at: typeof goal.started_at },
        { id: goal.id, is_active: 1, title: 'New camera', currency: 'EUR', start_amount: 20, raised_amount: 20, goal_amount: 300.5, started_at: 'string', expires_at: expiresAt, ended_at: null },
      );
      assert.match(goal.started_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      assert.deepEqual(await getGoal(db, goal.id, { userId: user.id }), goal);
      assert.deepEqual(await listGoals(db, user.id, { state: 'active' }), [goal]);
      assert.deepEqual(await listGoals(db, user.id, { state: 'finished' }), []);

      const edited = await updateGoal(db, user.id, goal.id, { title: 'Better camera', goalAmount: 400, expiresAt: null });
      assert.deepEqual([edited.title, edited.goal_amount, edited.expires_at], ['Better camera', 400, null]);
      const closed = await closeGoal(db, goal.id, { userId: user.id });
      assert.equal(closed.is_active, 0);
      assert.match(closed.ended_at!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      assert.deepEqual(await listGoals(db, user.id, { state: 'finished' }), [closed]);
      assert.deepEqual(await listGoals(db, user.id, { state: 'active' }), []);
    });

    test('lists are newest first, per streamer, bounded by limit', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const other = await makeUser(db);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await createGoal(db, user.id, { title: `Goal ${i}`, goalAmount: 10 })).id);
      await createGoal(db, other.id, { title: 'Not yours', goalAmount: 10 });
      assert.deepEqual((await listGoals(db, user.id)).map((g) => g.id), [...ids].reverse());
      assert.deepEqual((await listGoals(db, user.id, { limit: 2 })).map((g) => g.id), [ids[2], ids[1]]);
    });

    test("another streamer's goal is not found, to read, edit or close, and stays untouched", async () => {
      const db = t.database.db;
      const owner = await makeUser(db);
      const stranger = await makeUser(db);
      const theirs = await createGoal(db, owner.id, { title: 'Mine', goalAmount: 50 });
      await assert.rejects(getGoal(db, theirs.id, { userId: stranger.id }), NotFoundError);
      await assert.rejects(updateGoal(db, stranger.id, theirs.id, { title: 'Stolen' }), NotFoundError);
      await assert.rejects(closeGoal(db, theirs.id, { userId: stranger.id }), NotFoundError);
      assert.deepEqual(await getGoal(db, theirs.id, { userId: owner.id }), theirs);
    });
  });
}
