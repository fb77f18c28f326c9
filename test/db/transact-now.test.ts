import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { transactNow, transactSoon } from '../../src/db/database.js';
import { ThreadWriteLock } from '../../src/db/thread-write-lock.js';
import { dialects, openTestDatabase, type TestDatabase } from '../helper.js';

const RATE = 'insert into currency_rates (currency, per_usd, as_of, updated_at) values (?, ?, ?, ?)';
const rate = (currency: string) => [currency, 2, '2026-01-01', 0];

for (const dialect of await dialects()) {
  describe(`a write transaction run within the calling turn (transactNow, ${dialect})`, () => {
    let t: TestDatabase;
    let commits: (readonly object[])[] = [];
    let statements = 0;
    let stops: (() => void)[];
    before(async () => {
      t = await openTestDatabase(dialect);
      stops = [t.database.onCommit((notes) => commits.push(notes)), t.database.onQuery(() => statements++)];
    });
    after(async () => {
      for (const stop of stops) stop();
      await t.drop();
    });
    const stored = async (currency: string) => (await t.database.db.selectFrom('currency_rates').select('currency').where('currency', '=', currency).execute()).length;

    if (dialect === 'postgres') {
      test('PostgreSQL: nothing is done, the caller takes its usual path', async () => {
        let ran = false;
        assert.equal(transactNow(t.database.db, () => (ran = true)), undefined);
        assert.equal(await transactSoon(t.database.db, () => (ran = true)), undefined);
        assert.equal(ran, false);
      });
      return;
    }

    test('commits before it returns, then calls the commit listeners once with its notes; each statement is timed', async () => {
      commits = [];
      statements = 0;
      const note = { n: 1 };
      const result = transactNow(t.database.db, (tx) => {
        tx.run(RATE, rate('AAA'));
        tx.note(note);
        assert.deepEqual(commits, [], 'nothing before the commit');
        return tx.get<{ n: number }>('select count(*) as n from currency_rates where currency = ?', ['AAA'])!.n;
      });
      assert.equal(result, 1);
      assert.deepEqual(commits, [[note]], 'called before transactNow returned');
      assert.equal(statements, 4, 'BEGIN, two statements, COMMIT');
      assert.equal(await stored('AAA'), 1);
    });

    test('a throw rolls back and reaches the caller: nothing written, no commit; the connection is free again', async () => {
      commits = [];
      assert.throws(
        () =>
          transactNow(t.database.db, (tx) => {
            tx.run(RATE, rate('BBB'));
            tx.note({ n: 2 });
            throw new Error('refused');
          }),
        /refused/,
      );
      // A failing statement is the caller's error too.
      assert.throws(() => transactNow(t.database.db, (tx) => tx.run(RATE, rate('AAA'))), /UNIQUE/);
      assert.deepEqual(commits, []);
      assert.equal(await stored('BBB'), 0);
      await t.database.db.transaction().execute(async (tx) => {
        await tx.insertInto('currency_rates').values({ currency: 'CCC', per_usd: 1, as_of: '2026-01-01', updated_at: 0 }).execute();
      });
      assert.equal(commits.length, 1);
    });

    test('work that returns undefined is rolled back without a commit', async () => {
      commits = [];
      assert.equal(
        transactNow(t.database.db, (tx) => {
          tx.run(RATE, rate('DDD'));
          tx.note({ n: 3 });
          return undefined;
        }),
        undefined,
      );
      assert.deepEqual(commits, []);
      assert.equal(await stored('DDD'), 0);
    });

    test('never runs inside a Kysely transaction, nor ahead of a statement waiting for the connection', async () => {
      let ran = 0;
      await t.database.db.transaction().execute(async (tx) => {
        await tx.insertInto('currency_rates').values({ currency: 'EEE', per_usd: 1, as_of: '2026-01-01', updated_at: 0 }).execute();
        assert.equal(transactNow(t.database.db, () => ++ran), undefined);
      });
      const pending = t.database.db.selectFrom('currency_rates').select('currency').execute();
      assert.equal(transactNow(t.database.db, () => ++ran), undefined);
      await pending;
      await t.database.db.connection().execute(async () => {
        assert.equal(transactNow(t.database.db, () => ++ran), undefined);
      });
      assert.equal(ran, 0);
      assert.equal(transactNow(t.database.db, () => ++ran), 1, 'runs once the connection is free');
    });

    test("waits for no other thread: while another holds the threads' write lock, nothing is done", async () => {
      const other = new ThreadWriteLock(t.database.threadLock!.buffer, 2, false);
      assert.ok(other.tryAcquire());
      try {
        assert.equal(transactNow(t.database.db, (tx) => tx.run(RATE, rate('FFF'))), undefined);
      } finally {
        other.release();
      }
      assert.equal(await stored('FFF'), 0);
      transactNow(t.database.db, (tx) => (tx.run(RATE, rate('FFF')), true));
      assert.equal(await stored('FFF'), 1);
      assert.ok(other.tryAcquire(), 'the lock was released after the commit');
      other.release();
    });

    test("transactSoon waits for another thread's turn of the write lock, then runs in the turn it is handed", async () => {
      const other = new ThreadWriteLock(t.database.threadLock!.buffer, 2, false);
      assert.ok(other.tryAcquire());
      let ran = false;
      const soon = transactSoon(t.database.db, (tx) => {
        ran = true;
        return tx.run(RATE, rate('GGG'));
      });
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(ran, false, 'nothing runs while the other thread holds the lock');
      assert.ok(t.database.threadLock!.priorityWaiting(), 'the other side sees a request waiting, and ends its turn');
      other.release();
      assert.equal(await soon, 1);
      assert.equal(await stored('GGG'), 1);
      assert.ok(other.tryAcquire(), 'the lock was released after the commit');
      other.release();
    });

    test('transactSoon gives way to a Kysely statement that took the connection while it waited: nothing done, the lock free', async () => {
      const other = new ThreadWriteLock(t.database.threadLock!.buffer, 2, false);
      assert.ok(other.tryAcquire());
      let ran = false;
      const soon = transactSoon(t.database.db, (tx) => ((ran = true), tx.run(RATE, rate('HHH'))));
      // A transaction of the usual path, begun meanwhile: it waits for the lock at its BEGIN.
      const usual = t.database.db.transaction().execute(async (tx) => {
        await tx.insertInto('currency_rates').values({ currency: 'III', per_usd: 1, as_of: '2026-01-01', updated_at: 0 }).execute();
      });
      await new Promise((r) => setTimeout(r, 20));
      other.release();
      assert.equal(await soon, undefined);
      await usual;
      assert.equal(ran, false);
      assert.equal(await stored('HHH'), 0);
      assert.equal(await stored('III'), 1);
      assert.ok(other.tryAcquire(), 'nobody kept the lock');
      other.release();
      // The connection in use from the start: undefined at once, without waiting for anything.
      const pending = t.database.db.selectFrom('currency_rates').select('currency').execute();
      assert.equal(await transactSoon(t.database.db, () => (ran = true)), undefined);
      await pending;
      assert.equal(ran, false);
    });
  });
}
