import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createDatabase } from '../../src/db/database.js';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WAKE_WAL_BYTES, WalCheckpointer } from '../../src/db/wal-checkpointer.js';
import { tempDir } from '../helper.js';
import { until } from '../wait.js';

const autocheckpoint = async (database: ReturnType<typeof createDatabase>) =>
  (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db)).rows[0]!.wal_autocheckpoint;

/** A SQLite file with a table `t` of blobs, and a checkpointer for it (not started). */
async function walDatabase(name: string) {
  const file = path.join(tempDir(), name);
  const database = createDatabase({ dialect: 'sqlite', file });
  const checkpointer = new WalCheckpointer(database);
  await sql`create table t (id integer primary key, b blob)`.execute(database.db);
  return { file, database, checkpointer };
}

/** Pages written through `database` in commits of one 4 KiB row each (a page and more apiece). */
async function write(database: ReturnType<typeof createDatabase>, commits: number): Promise<void> {
  for (let i = 0; i < commits; i++) await database.db.transaction().execute((tx) => sql`insert into t (b) values (randomblob(4000))`.execute(tx));
}

test("the thread checkpoints the app's commits: the database file fills, the WAL starts over, the app's own threshold is only a backstop", async () => {
  const { file, database, checkpointer } = await walDatabase('wal.sqlite');
  try {
    assert.equal(await autocheckpoint(database), 1000, "SQLite's default before the thread runs");
    checkpointer.start(0, 0);
    await until(async () => (await autocheckpoint(database)) === BACKSTOP_AUTOCHECKPOINT_PAGES, 10_000, 'the backstop threshold');
    const fileBefore = fs.statSync(file).size;
    // ~2 pages a commit: 1,200 commits write some 2,400 frames, well below the app's 8,000.
    await write(database, 1200);
    // The app's connection, below its threshold, never checkpointed: the file grew from the thread's work.
    await until(() => fs.statSync(file).size > fileBefore + 1000 * 4096, 10_000, 'pages copied into the database file');
    assert.ok(checkpointer.stats.checkpoints >= 1);
    // Once the thread has copied it all, the next write starts the WAL over: a few frames, not thousands.
    await until(async () => {
      await write(database, 1);
      await new Promise((r) => setTimeout(r, 300));
      return checkpointer.stats.walFrames < 100;
    }, 10_000, 'the WAL starting over');
  } finally {
    await checkpointer.stop();
  }
  assert.equal(checkpointer.running, false);
  assert.equal(await autocheckpoint(database), 1000, 'stopped: the app checkpoints in its commits again');
  await database.close();
});

test("the last pass waits for this process's writer holding the threads' write lock, and runs once it is free", async () => {
  const { file, database, checkpointer } = await walDatabase('wal-lock.sqlite');
  try {
    checkpointer.start(0, 0);
    await until(async () => (await autocheckpoint(database)) === BACKSTOP_AUTOCHECKPOINT_PAGES, 10_000, 'the thread');
    // This side holds the lock; another connection (outside the process's lock, as another
    // process would be) takes the WAL past the 1,000-frame mark meanwhile.
    assert.ok(database.threadLock!.tryAcquire());
    const other = new SQLite(file);
    other.pragma('wal_autocheckpoint = 0');
    const insert = other.prepare('insert into t (b) values (randomblob(4000))');
    for (let i = 0; i < 700; i++) insert.run();
    other.close();
    await until(() => checkpointer.stats.checkpoints >= 1, 10_000, 'the unlocked pass');
    // Several rounds (200 ms apart) go by: the unlocked passes run, the locked one waits.
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(checkpointer.stats.lockedPasses, 0, 'no pass under the lock while this side holds it');
    database.threadLock!.release();
    await until(() => checkpointer.stats.lockedPasses >= 1, 10_000, 'the locked pass after the release');
  } finally {
    await checkpointer.stop();
    await database.close();
  }
});

test('the thread starts only once the WAL file has grown to the wake-up size: a server that writes little has none', async () => {
  const { file, database, checkpointer } = await walDatabase('wal-wake.sqlite');
  try {
    checkpointer.start(0);
    await write(database, 10);
    // Several looks at the WAL's size (every 500 ms) go by: about 80 kB, far below the wake-up size.
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(checkpointer.running, false, 'no thread for a small WAL');
    assert.equal(await autocheckpoint(database), 1000, "SQLite's own threshold meanwhile");
    // ~2 pages a commit: 200 commits take the WAL past 1 MiB.
    await write(database, 200);
    assert.ok(fs.statSync(`${file}-wal`).size >= WAKE_WAL_BYTES);
    await until(async () => checkpointer.running && (await autocheckpoint(database)) === BACKSTOP_AUTOCHECKPOINT_PAGES, 10_000, 'the thread, once the WAL has grown');
  } finally {
    await checkpointer.stop();
    await database.close();
  }
});
