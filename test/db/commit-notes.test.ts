import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { noteOnCommit, releaseSavepoint, rollbackToSavepoint, savepoint } from '../../src/db/database.js';
import { durableWrite } from '../../src/modules/sales/write-batcher.js';
import { dialects, openTestDatabase, type TestDatabase } from '../helper.js';

for (const dialect of await dialects()) {
  describe(`notes a transaction leaves for its commit (${dialect})`, () => {
    let t: TestDatabase;
    let seen: (readonly object[])[] = [];
    let stop: () => void;
    before(async () => {
      t = await openTestDatabase(dialect);
      stop = t.database.onCommit((notes) => seen.push(notes));
    });
    after(async () => {
      stop();
      await t.drop();
    });
    const note = (n: number) => ({ n });
    const numbers = () => seen.map((notes) => notes.map((x) => (x as { n: number }).n));

    test('the commit listeners get them once the COMMIT has returned, in the order they were left', async () => {
      seen = [];
      await t.database.db.transaction().execute(async (tx) => {
        await noteOnCommit(tx, note(1));
        await sql`select 1`.execute(tx);
        await noteOnCommit(tx, note(2));
        assert.deepEqual(seen, [], 'nothing before the commit');
      });
      assert.deepEqual(numbers(), [[1, 2]]);
    });

    test('a rollback drops them; the next transaction starts with none', async () => {
      seen = [];
      await assert.rejects(
        t.database.db.transaction().execute(async (tx) => {
          await noteOnCommit(tx, note(3));
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      await t.database.db.transaction().execute(async (tx) => noteOnCommit(tx, note(4)));
      assert.deepEqual(numbers(), [[4]]);
    });

    test('a rollback to a savepoint drops the notes left after it, and only those', async () => {
      seen = [];
      await t.database.db.transaction().execute(async (tx) => {
        await noteOnCommit(tx, note(5));
        await savepoint(tx, 'job');
        await noteOnCommit(tx, note(6));
        await savepoint(tx, 'inner_job');
        await noteOnCommit(tx, note(7));
        await rollbackToSavepoint(tx, 'job');
        await releaseSavepoint(tx, 'job');
        await noteOnCommit(tx, note(8));
        await savepoint(tx, 'job');
        await noteOnCommit(tx, note(9));
        await releaseSavepoint(tx, 'job');
      });
      assert.deepEqual(numbers(), [[5, 8, 9]]);
    });

    test("group commit: a failing job's notes are dropped with its work; the other jobs' reach the commit", async () => {
      seen = [];
      const job = (n: number, fail: boolean) =>
        durableWrite(t.database.db, async (tx) => {
          await sql`select 1`.execute(tx);
          await noteOnCommit(tx, note(n));
          if (fail) throw new Error(`job ${n} failed`);
          return n;
        });
      const results = await Promise.allSettled([job(11, false), job(12, true), job(13, false)]);
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.deepEqual(numbers().flat().sort(), [11, 13]);
    });

    test('outside a transaction nothing is noted (a commit signalled by hand has no notes)', async () => {
      seen = [];
      await noteOnCommit(t.database.db, note(10));
      await t.database.db.transaction().execute(async () => {});
      assert.deepEqual(numbers(), [[]]);
    });
  });
}
