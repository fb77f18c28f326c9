import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { noteOnCommit } from '../../src/db/database.js';
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
        await sql`savepoint job`.execute(tx);
        await noteOnCommit(tx, note(6));
        await sql`savepoint inner_job`.execute(tx);
        await noteOnCommit(tx, note(7));
        await sql`rollback to savepoint job`.execute(tx);
        await sql`release savepoint job`.execute(tx);
        await noteOnCommit(tx, note(8));
        await sql`savepoint job`.execute(tx);
        await noteOnCommit(tx, note(9));
        await sql`release savepoint job`.execute(tx);
      });
      assert.deepEqual(numbers(), [[5, 8, 9]]);
    });

    test('outside a transaction nothing is noted (a commit signalled by hand has no notes)', async () => {
      seen = [];
      await noteOnCommit(t.database.db, note(10));
      await t.database.db.transaction().execute(async () => {});
      assert.deepEqual(numbers(), [[]]);
    });
  });
}
