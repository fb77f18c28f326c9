import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { createDatabase, type Database } from '../../src/db/database.js';
import { tempDir } from '../helper.js';

/**
 * Two connections to one SQLite file sharing the threads' write lock, as the app's and the webhook
 * dispatcher thread's do. Here both live on one thread: a write that went to SQLite's busy handler
 * instead of the lock would sleep this very thread, so the holder could never commit and the write
 * would fail with SQLITE_BUSY after the busy timeout — the test would notice.
 */
function pair(): { app: Database; other: Database; close(): Promise<void> } {
  const file = path.join(tempDir(), 'lock.sqlite');
  const app = createDatabase({ dialect: 'sqlite', file });
  const other = createDatabase({ dialect: 'sqlite', file }, { threadLock: { buffer: app.threadLock!.buffer, holder: 2 } });
  return { app, other, close: async () => void (await Promise.all([app.close(), other.close()])) };
}

const settled = (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  return () => done;
};

test("a write waits for the other connection's transaction without blocking the event loop, then goes on", async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer)`.execute(app.db);
    let write!: Promise<unknown>;
    let ticks = 0;
    await other.db.connection().execute(async (c) => {
      await sql`begin immediate`.execute(c);
      await sql`insert into t values (1)`.execute(c);
      write = app.db.transaction().execute((tx) => sql`insert into t values (2)`.execute(tx));
      const written = settled(write);
      const timer = setInterval(() => ticks++, 5);
      await sleep(100);
      clearInterval(timer);
      assert.equal(written(), false, 'waits while the other transaction is open');
      // Blocked in SQLite's busy handler, the thread would not tick at all (and the write would fail
      // with SQLITE_BUSY after 5 s, this transaction never getting to commit).
      assert.ok(ticks > 0, 'the event loop ran meanwhile');
      await sql`commit`.execute(c);
    });
    await write;
    const rows = await sql<{ x: number }>`select x from t order by rowid`.execute(app.db);
    assert.deepEqual(rows.rows.map((r) => r.x), [1, 2]);
    assert.equal(app.threadLock!.waits, 1);
    // Reads never wait: WAL readers do not block on a writer.
    await other.db.connection().execute(async (c) => {
      await sql`begin immediate`.execute(c);
      assert.equal((await sql<{ n: number }>`select count(*) as n from t`.execute(app.db)).rows[0]!.n, 2);
      await sql`rollback`.execute(c);
    });
  } finally {
    await close();
  }
});

test('the app side goes first: while it waits, the other side takes no new turn', async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer)`.execute(app.db);
    const order: string[] = [];
    let appWrite!: Promise<unknown>;
    let otherWrite!: Promise<unknown>;
    await other.db.connection().execute(async (c) => {
      await sql`begin immediate`.execute(c);
      appWrite = sql`insert into t values (1)`.execute(app.db).then(() => order.push('app'));
      await sleep(20);
      // Queued behind the app's waiting write, though the app side has not run yet.
      otherWrite = other.db.transaction().execute((tx) => sql`insert into t values (2)`.execute(tx)).then(() => order.push('other'));
      await sql`commit`.execute(c);
    });
    await Promise.all([appWrite, otherWrite]);
    assert.deepEqual(order, ['app', 'other']);
  } finally {
    await close();
  }
});

test('a rolled-back transaction and a failed statement give the lock back', async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer primary key)`.execute(app.db);
    await assert.rejects(other.db.transaction().execute(async (tx) => {
      await sql`insert into t values (1)`.execute(tx);
      throw new Error('undo');
    }));
    await assert.rejects(sql`insert into t values ('not a number')`.execute(other.db));
    await sql`insert into t values (1)`.execute(other.db);
    await assert.rejects(sql`insert into t values (1)`.execute(other.db), /UNIQUE/);
    // Nothing holds it now: the app's write does not wait.
    await sql`insert into t values (2)`.execute(app.db);
    assert.equal(app.threadLock!.waits, 0);
  } finally {
    await close();
  }
});

test("the other side sees when the app's side waits, from the moment it starts waiting until it has the lock", async () => {
  const { app, other, close } = pair();
  try {
    await sql`create table t (x integer)`.execute(app.db);
    const lock = other.threadLock!;
    let write!: Promise<unknown>;
    await other.db.connection().execute(async (c) => {
      await sql`begin immediate`.execute(c);
      assert.equal(lock.priorityWaiting(), false);
      write = sql`insert into t values (1)`.execute(app.db);
      await sleep(20);
      assert.equal(lock.priorityWaiting(), true, 'the app side waits');
      await sql`commit`.execute(c);
    });
    await write;
    assert.equal(lock.priorityWaiting(), false, 'no longer once it had its turn');
    assert.ok(app.threadLock!.maxWaitMs > 0);
  } finally {
    await close();
  }
});
