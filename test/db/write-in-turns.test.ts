import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createDatabase, writeInTurns, type Database } from '../../src/db/database.js';
import { ThreadWriteLock } from '../../src/db/thread-write-lock.js';
import { tempDir } from '../helper.js';

/**
 * `writeInTurns`, the webhook dispatcher's way of writing on SQLite: groups of statements run
 * straight on the connection, in one transaction unless a request waits for the threads' write
 * lock between two groups. As in thread-write-lock.test.ts, the "dispatcher" is a second connection
 * on this thread sharing the app's lock, and the "request" is the app's side of that lock.
 */
function pair(): { app: Database; other: Database; close(): Promise<void> } {
  const file = path.join(tempDir(), 'turns.sqlite');
  const app = createDatabase({ dialect: 'sqlite', file });
  const other = createDatabase({ dialect: 'sqlite', file }, { threadLock: { buffer: app.threadLock!.buffer, holder: 2 } });
  return { app, other, close: async () => void (await Promise.all([app.close(), other.close()])) };
}

const rowsOf = async (db: Database) => (await sql<{ x: number }>`select x from t order by x`.execute(db.db)).rows.map((r) => r.x);
const synchronousOf = async (db: Database) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(db.db)).rows[0]!.synchronous;

test('groups share one transaction when nobody waits, and the connection is durable again after it', async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer primary key)`.execute(app.db);
    const commits: number[] = [];
    const seen: number[] = [];
    await writeInTurns(
      other.db,
      [1, 2, 3].map((x) => (tx) => {
        assert.equal(tx.run('insert into t (x) values (?)', [x]), 1, 'run answers the rows changed');
        // Inside the transaction: this group sees the groups before it.
        seen.push(tx.all<{ x: number }>('select x from t', []).length);
        // NORMAL (1) while it writes: what it writes is redone if a crash loses it.
        assert.equal(tx.get<{ synchronous: number }>('pragma synchronous', [])!.synchronous, 1);
      }),
      (committed) => commits.push(committed),
    );
    assert.deepEqual(seen, [1, 2, 3]);
    assert.deepEqual(commits, [3], 'one commit for the three groups');
    assert.deepEqual(await rowsOf(app), [1, 2, 3]);
    assert.equal(await synchronousOf(other), 2, 'FULL again for whatever else the connection writes');
    assert.equal(app.threadLock!.turnsOf(2).turns, 1);
  } finally {
    await close();
  }
});

test('a request waiting between two groups goes first: what is written commits, the rest follows in a new turn', async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer primary key)`.execute(app.db);
    const request = new ThreadWriteLock(app.threadLock!.buffer, 1, true);
    let requestSaw: number[] | null = null;
    let requestDone: Promise<void> | null = null;
    const commits: number[] = [];
    await writeInTurns(
      other.db,
      [1, 2, 3, 4].map((x) => (tx) => {
        tx.run('insert into t (x) values (?)', [x]);
        if (x !== 2) return;
        // The request arrives while the second group runs: it waits (the dispatcher holds the lock).
        assert.equal(request.tryAcquire(), false);
        requestDone = request.acquire().then(async () => {
          try {
            requestSaw = await rowsOf(app);
          } finally {
            request.release();
          }
        });
      }),
      (committed) => commits.push(committed),
    );
    await requestDone;
    assert.deepEqual(requestSaw, [1, 2], 'the request got the lock right after the second group, which had committed');
    assert.deepEqual(commits, [2, 4]);
    assert.deepEqual(await rowsOf(app), [1, 2, 3, 4]);
    assert.equal(app.threadLock!.turnsOf(2).turnedOver, 1);
  } finally {
    await close();
  }
});

test('a group that throws rolls back its transaction alone; the groups committed before a turn over stand; the lock is free after', async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer primary key)`.execute(app.db);
    const request = new ThreadWriteLock(app.threadLock!.buffer, 1, true);
    let requestDone: Promise<void> | null = null;
    const commits: number[] = [];
    await assert.rejects(
      writeInTurns(
        other.db,
        [
          (tx) => {
            tx.run('insert into t (x) values (1)', []);
            assert.equal(request.tryAcquire(), false);
            requestDone = request.acquire().then(() => request.release());
          },
          (tx) => tx.run('insert into t (x) values (2)', []),
          // A constraint broken: the error is SQLite's own.
          (tx) => tx.run('insert into t (x) values (2)', []),
        ],
        (committed) => commits.push(committed),
      ),
      /UNIQUE constraint failed/,
    );
    await requestDone;
    assert.deepEqual(commits, [1]);
    assert.deepEqual(await rowsOf(app), [1], 'the first group committed before the request; the second went with the third');
    assert.equal(await synchronousOf(other), 2);
    // Nobody holds the lock: the app writes at once.
    assert.equal(app.threadLock!.tryAcquire(), true);
    app.threadLock!.release();
    await sql`insert into t (x) values (5)`.execute(other.db);
    assert.deepEqual(await rowsOf(app), [1, 5]);
  } finally {
    await close();
  }
});

test('it refuses a PostgreSQL database, which has no such lock, with a message that says why', () => {
  const db = createDatabase({ dialect: 'postgres', url: 'postgres://127.0.0.1:1/none' });
  try {
    assert.throws(() => writeInTurns(db.db, []), /SQLite/);
  } finally {
    void db.close();
  }
});
