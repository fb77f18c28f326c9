import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type DatabaseConnection, type LogEvent, type PostgresPool, type Transaction } from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig } from '../config/config.js';
import { statementName } from './named-statements.js';
import { DatabaseUnavailableError } from './unavailable.js';
import { ThreadWriteLock } from './thread-write-lock.js';
import type { DB } from './schema.js';

export { DatabaseUnavailableError } from './unavailable.js';

export type Dialect = 'sqlite' | 'postgres';
export type QueryListener = (seconds: number, failed: boolean) => void;
export type CommitListener = (notes: readonly object[]) => void;
export type Tx = Transaction<DB>;

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * Calls `listener` after every transaction this process commits, with the notes the transaction
   * left (`noteOnCommit`; none for a commit signalled by `signalCommit`). The outbox relay uses it
   * to publish at once instead of waiting for its next poll.
   */
  onCommit(listener: CommitListener): () => void;
  /** Calls `listener` after every SQL statement with its duration and whether it failed (metrics). */
  onQuery(listener: QueryListener): () => void;
  /**
   * How long a request should wait for the database before failing with DatabaseUnavailableError
   * (503, Retry-After): the pool's acquire timeout on PostgreSQL, busy_timeout on SQLite.
   */
  waitLimitMs: number;
  /** What it was opened with: another thread opens its own connection to the same database from it. */
  config: DatabaseConfig;
  /**
   * SQLite: the write lock this process's threads take before SQLite's (thread-write-lock.ts);
   * another thread's connection to the file shares its buffer. Null on PostgreSQL.
   */
  threadLock: ThreadWriteLock | null;
  /** True when the database answers a trivial query (used by /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

// int8 (bigint) comes back from pg as a string by default; our ids, epoch-ms times and minor-unit
// amounts all stay far below 2^53, so numbers are safe and keep both dialects returning one type.
//
// pg is loaded on first use, so an SQLite server never loads it (start-up time: bench/README.md).
// It is CommonJS, so `require` loads it synchronously and createDatabase stays synchronous.
let pgModule: typeof pg | undefined;
function loadPg(): typeof pg {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof pg;
    pgModule.types.setTypeParser(20, (value) => Number(value));
  }
  return pgModule;
}

/**
 * A string as a PostgreSQL literal, for the rare statement that cannot take parameters (a message
 * of several statements: outbox.repository.ts). Only called when pg is in use.
 */
export function postgresLiteral(value: string): string {
  return loadPg().escapeLiteral(value);
}

/** Notes left by the transaction open on a connection (`noteOnCommit`), until it ends. */
const transactionNotes = new WeakMap<DatabaseConnection, object[]>();
/** The transaction's open savepoints, each with how many notes were left before it. */
const savepointMarks = new WeakMap<DatabaseConnection, { name: string; notes: number }[]>();
const NO_NOTES: readonly object[] = Object.freeze([]);

/**
 * Leaves `note` for the commit listeners of transaction `tx`: they get it once its COMMIT has
 * returned (the transaction is durable); it is dropped if the transaction rolls back. The outbox
 * relay publishes a commit's events from the rows its transaction wrote (`enqueueEvent`), without
 * reading them back. Outside a transaction it does nothing.
 */
export async function noteOnCommit(tx: Kysely<DB>, note: object): Promise<void> {
  await onConnection(tx, (connection) => {
    const notes = transactionNotes.get(connection);
    if (notes) notes.push(note);
    else transactionNotes.set(connection, [note]);
  });
}

/**
 * Makes every commit call `committed` with the transaction's notes (the outbox relay's wake-up),
 * and optionally replaces the BEGIN statement. SQLite needs BEGIN IMMEDIATE: Kysely's deferred
 * BEGIN lets a reader that later writes fail with SQLITE_BUSY at once when another process (the
 * CLI) holds the write lock, instead of waiting out busy_timeout; IMMEDIATE takes the write lock up
 * front and so waits its turn.
 */
function signallingDialect<D extends SqliteDialect | PostgresDialect>(dialect: D, committed: CommitListener, beginSql?: string): D {
  const createDriver = dialect.createDriver.bind(dialect);
  dialect.createDriver = () => {
    const driver = createDriver();
    const begin = beginSql ? CompiledQuery.raw(beginSql) : null;
    const beginTransaction = driver.beginTransaction.bind(driver);
    const commit = driver.commitTransaction.bind(driver);
    const rollback = driver.rollbackTransaction.bind(driver);
    const forget = (connection: DatabaseConnection) => {
      transactionNotes.delete(connection);
      savepointMarks.delete(connection);
    };
    driver.beginTransaction = async (connection, settings) => {
      forget(connection);
      if (begin) await connection.executeQuery(begin);
      else await beginTransaction(connection, settings);
    };
    driver.commitTransaction = async (connection: DatabaseConnection) => {
      try {
        await commit(connection);
      } catch (err) {
        forget(connection);
        throw err;
      }
      const notes = transactionNotes.get(connection) ?? NO_NOTES;
      forget(connection);
      committed(notes);
    };
    driver.rollbackTransaction = async (connection: DatabaseConnection) => {
      forget(connection);
      await rollback(connection);
    };
    return driver;
  };
  return dialect;
}

/**
 * Savepoints that the notes of their transaction follow (sales' group commit rolls a failed job
 * back to its own): a rollback to a savepoint drops the notes left after it, as it drops that
 * work. Code that opens savepoints does so through these three, so the notes know without any
 * statement's text being read; a savepoint opened by raw SQL is invisible to them.
 */
export async function savepoint(tx: Kysely<DB>, name: string): Promise<void> {
  await sql`savepoint ${sql.id(name)}`.execute(tx);
  await onConnection(tx, (connection) => {
    const marks = savepointMarks.get(connection);
    const mark = { name, notes: transactionNotes.get(connection)?.length ?? 0 };
    if (marks) marks.push(mark);
    else savepointMarks.set(connection, [mark]);
  });
}

/** Undoes the work and drops the notes after savepoint `name`, which stays open (as in SQL). */
export async function rollbackToSavepoint(tx: Kysely<DB>, name: string): Promise<void> {
  await sql`rollback to savepoint ${sql.id(name)}`.execute(tx);
  await onConnection(tx, (connection) => {
    const marks = savepointMarks.get(connection);
    const at = latestMark(marks, name);
    if (at < 0) return;
    // Savepoints opened after it are gone.
    marks!.length = at + 1;
    transactionNotes.get(connection)?.splice(marks![at]!.notes);
  });
}

/** Closes savepoint `name` (and those opened after it), keeping their work and notes. */
export async function releaseSavepoint(tx: Kysely<DB>, name: string): Promise<void> {
  await sql`release savepoint ${sql.id(name)}`.execute(tx);
  await onConnection(tx, (connection) => {
    const marks = savepointMarks.get(connection);
    const at = latestMark(marks, name);
    if (at >= 0) marks!.length = at;
  });
}

function latestMark(marks: { name: string }[] | undefined, name: string): number {
  if (marks) for (let i = marks.length - 1; i >= 0; i--) if (marks[i]!.name === name) return i;
  return -1;
}

/** Runs `use` with the one connection transaction `tx` runs on (nothing outside a transaction). */
async function onConnection(tx: Kysely<DB>, use: (connection: DatabaseConnection) => void): Promise<void> {
  if (!tx.isTransaction) return;
  await tx.getExecutor().provideConnection(async (connection) => use(connection));
}

const autocommitSignals = new WeakMap<Kysely<DB>, CommitListener>();

/**
 * Tells `onCommit` listeners that a statement run outside any transaction has committed a write:
 * on PostgreSQL a single statement commits by itself, and a write that needs no more than one
 * statement saves the BEGIN and COMMIT round trips (sales.service.ts). Transactions signal on their
 * own. `notes`: what the statement left for the listeners, as `noteOnCommit` does in a transaction.
 */
export function signalCommit(db: Kysely<DB>, notes: readonly object[] = NO_NOTES): void {
  autocommitSignals.get(db)?.(notes);
}

/**
 * SQLite: the statements of a transaction run by `transactNow`, each straight on the connection,
 * within the calling turn. Repositories write their `…Now` functions against it.
 */
export interface NowStatements extends StraightStatements {
  /** Leaves `note` for the commit listeners, as `noteOnCommit` does. */
  note(note: object): void;
}

/** SQLite: statements run straight on the connection, within the calling turn (`transactNow`, `writeInTurns`). */
export interface StraightStatements {
  /** The first row of a statement that returns rows (RETURNING included), or undefined. */
  get<R>(sql: string, parameters: readonly unknown[]): R | undefined;
  /** Every row of a statement that returns rows. */
  all<R>(sql: string, parameters: readonly unknown[]): R[];
  /** A statement whose rows, if any, are not wanted: how many rows it changed. */
  run(sql: string, parameters: readonly unknown[]): number;
}

interface NowTransaction {
  now<T>(work: (tx: NowStatements) => T | undefined): T | undefined;
  soon<T>(work: (tx: NowStatements) => T | undefined): Promise<T | undefined>;
}
const nowTransactions = new WeakMap<Kysely<DB>, NowTransaction>();

/** One of `writeInTurns`'s groups: its statements, none of which may await. */
export type TurnGroup = (tx: StraightStatements) => void;
type TurnWriter = (db: Kysely<DB>, groups: readonly TurnGroup[], onCommit: (groupsCommitted: number) => void) => Promise<void>;
const turnWriters = new WeakMap<Kysely<DB>, TurnWriter>();

/**
 * SQLite, for a writer in a thread of its own whose writes a crash may lose because they are redone
 * or sent again (the webhook dispatcher's bookkeeping): `groups`, each whole on its own, written as
 * `transactNow` writes — straight on the connection, no await between statements — so that a turn
 * of the threads' write lock, which a request's commit may be waiting for, lasts as long as
 * SQLite's own work and no longer (Kysely's layers cost a promise and a connection hand-over per
 * statement, bench/README.md). The groups share one transaction unless the requests' side waits
 * for the lock between two of them: then what is written commits (`onCommit` gets how many groups
 * that makes), the request goes first, and the rest follows in a new transaction. The lock and the
 * connection are waited for without blocking the event loop. Commits skip the fsync (synchronous
 * NORMAL) and signal no commit listener. If a group throws, its transaction is rolled back — the
 * groups committed before it stand — and the error is thrown.
 */
export function writeInTurns(db: Kysely<DB>, groups: readonly TurnGroup[], onCommit: (groupsCommitted: number) => void = () => {}): Promise<void> {
  const writer = turnWriters.get(db);
  if (!writer) throw new Error('writeInTurns is for SQLite databases (createDatabase) only');
  return writer(db, groups, onCommit);
}

/**
 * SQLite: runs `work` as one write transaction — BEGIN IMMEDIATE, its statements, COMMIT (durable:
 * synchronous = FULL) and the commit listeners with its notes — all within the calling turn, on
 * the connection itself: no query built, no await between statements. On the way of every
 * donation to its alert, Kysely's layers (a promise and a connection hand-over per statement, the
 * transaction's own) cost as much as the statements did (bench/README.md, issue 16).
 *
 * Undefined when nothing was done, and the caller takes its usual path: PostgreSQL, the connection
 * is in use or awaited (a Kysely transaction or statement under way: this one must not run inside
 * it, nor pass those waiting), another thread holds the write lock (waited for without blocking
 * the event loop on the usual path), or `work` returned undefined — it found it needs more than
 * these statements, and what it did is rolled back. If `work` throws, the transaction is rolled
 * back and the error goes to the caller.
 */
export function transactNow<T>(db: Kysely<DB>, work: (tx: NowStatements) => T | undefined): T | undefined {
  return nowTransactions.get(db)?.now(work);
}

/**
 * `transactNow`, except that another thread's turn of the write lock (the webhook dispatcher's, the
 * WAL checkpointer's) is waited for — without blocking the event loop — and `work` then runs within
 * the turn that hands the lock over. Without it, a request that met such a turn took the usual
 * path: a Kysely transaction of several awaited statements, which holds the connection and the lock
 * longer, so that the requests arriving meanwhile took it too (bench/README.md, issue 11). Undefined
 * in transactNow's other cases, checked again once the lock is held.
 */
export function transactSoon<T>(db: Kysely<DB>, work: (tx: NowStatements) => T | undefined): Promise<T | undefined> {
  return nowTransactions.get(db)?.soon(work) ?? Promise.resolve(undefined);
}

function listenerSet<A extends unknown[]>() {
  const listeners = new Set<(...args: A) => void>();
  return {
    fire: (...args: A) => {
      for (const listener of listeners) listener(...args);
    },
    add(listener: (...args: A) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** Kysely's query log, turned into calls of the query listeners (it times each statement for us). */
function queryLog(queries: ReturnType<typeof listenerSet<[number, boolean]>>): (event: LogEvent) => void {
  return (event) => queries.fire(event.queryDurationMillis / 1000, event.level === 'error');
}

export const SQLITE_SYNCHRONOUS = 'FULL';
const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The database holds password hashes, sealed client secrets and token hashes: readable by the
 * service's user only, like secret.key. SQLite gives the -wal and -shm files the mode of the
 * database file, so creating that file 0600 covers all three; files of an older install are
 * narrowed too (best effort: a file we do not own keeps its mode and its owner's choice).
 */
function restrictSqliteFiles(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  for (const each of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if (fs.statSync(each).mode & 0o077) fs.chmodSync(each, 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw err;
    }
  }
}

export function openSqlite(file: string): SQLite.Database {
  restrictSqliteFiles(file);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on power loss, and every write
  // we acknowledge must be durable.
  sqlite.pragma(`synchronous = ${SQLITE_SYNCHRONOUS}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  return sqlite;
}

/**
 * Kysely prepares every query anew; preparing costs about as much as running a short query, so
 * statements are kept by SQL text (bounded LRU: IN-lists of varying length make new texts). Safe
 * because Kysely runs one statement at a time on the single SQLite connection and never streams.
 */
function withStatementCache(sqlite: SQLite.Database, maxStatements = 500): { prepare(sql: string): SQLite.Statement; close(): void } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (statements.size >= maxStatements) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
    close: () => sqlite.close(),
  };
}

/**
 * Every writing statement of this connection under the threads' write lock: from BEGIN to its
 * COMMIT or ROLLBACK (savepoints inside stay in it), or around one writing statement outside a
 * transaction. Reads never take it (WAL: they do not wait for writers).
 */
function lockingWrites(connection: DatabaseConnection, lock: ThreadWriteLock): void {
  const execute = connection.executeQuery.bind(connection);
  let held = false;
  const take = async () => {
    if (!lock.tryAcquire()) await lock.acquire();
  };
  connection.executeQuery = (async (query: CompiledQuery) => {
    const text = query.sql;
    if (BEGIN.test(text)) {
      await take();
      held = true;
      try {
        return await execute(query);
      } catch (err) {
        held = false;
        lock.release();
        throw err;
      }
    }
    if (END.test(text)) {
      try {
        return await execute(query);
      } finally {
        if (held) {
          held = false;
          lock.release();
        }
      }
    }
    if (held || READ.test(text)) return execute(query);
    await take();
    try {
      return await execute(query);
    } finally {
      lock.release();
    }
  }) as DatabaseConnection['executeQuery'];
}
const BEGIN = /^\s*begin\b/i;
const END = /^\s*(commit|end|rollback)(\s+transaction)?\s*;?\s*$/i;
const READ = /^\s*(select|pragma)\b/i;

/**
 * `transactNow` on one SQLite connection: `statements` is the statement cache Kysely's connection
 * uses too, `inUse` tells whether Kysely holds or awaits the connection, and the listeners get
 * what they get from a Kysely transaction (each statement timed, then the commit's notes).
 */
function nowTransaction(
  sqlite: SQLite.Database,
  statements: { prepare(sql: string): SQLite.Statement },
  lock: ThreadWriteLock,
  inUse: () => boolean,
  queries: QueryListener,
  committed: CommitListener,
): NowTransaction {
  const { timed, straight } = straightStatements(statements, queries);
  const busy = () => inUse() || sqlite.inTransaction;
  /** `work` in a transaction of its own, the lock held (and released here). */
  const held = <T>(work: (tx: NowStatements) => T | undefined): T | undefined => {
    let notes: object[] | null = null;
    const tx: NowStatements = { ...straight, note: (note) => (notes ??= []).push(note) };
    let result: ReturnType<typeof work>;
    try {
      timed('begin immediate', NO_PARAMETERS, (statement) => statement.run());
      result = work(tx);
      timed(result === undefined ? 'rollback' : 'commit', NO_PARAMETERS, (statement) => statement.run());
    } catch (err) {
      // A failed COMMIT may have ended the transaction already.
      if (sqlite.inTransaction) {
        try {
          timed('rollback', NO_PARAMETERS, (statement) => statement.run());
        } catch {
          // The statement's own error is the one to report.
        }
      }
      throw err;
    } finally {
      lock.release();
    }
    if (result !== undefined) committed(notes ?? NO_NOTES);
    return result;
  };
  return {
    now: (work) => (busy() || !lock.tryAcquire() ? undefined : held(work)),
    soon: async (work) => {
      if (busy()) return undefined;
      if (!lock.tryAcquire()) {
        await lock.acquire();
        // A Kysely statement or transaction may have taken the connection meanwhile: it goes first.
        if (busy()) {
          lock.release();
          return undefined;
        }
      }
      return held(work);
    },
  };
}
const NO_PARAMETERS: readonly unknown[] = Object.freeze([]);

/** Statements on the connection itself, each timed for the query listeners (metrics) as Kysely's are. */
function straightStatements(statements: { prepare(sql: string): SQLite.Statement }, queries: QueryListener) {
  const timed = <R>(text: string, parameters: readonly unknown[], use: (statement: SQLite.Statement) => R): R => {
    const started = performance.now();
    try {
      const result = use(statements.prepare(text));
      queries((performance.now() - started) / 1000, false);
      return result;
    } catch (err) {
      queries((performance.now() - started) / 1000, true);
      throw err;
    }
  };
  const straight: StraightStatements = {
    get: <R>(text: string, parameters: readonly unknown[]) => timed(text, parameters, (statement) => statement.get(parameters) as R | undefined),
    all: <R>(text: string, parameters: readonly unknown[]) => timed(text, parameters, (statement) => statement.all(parameters) as R[]),
    run: (text, parameters) => timed(text, parameters, (statement) => statement.run(parameters).changes),
  };
  return { timed, straight };
}

/** `writeInTurns` on one SQLite connection (see there); `statements` is the cache Kysely's connection uses too. */
function turnWriter(sqlite: SQLite.Database, statements: { prepare(sql: string): SQLite.Statement }, lock: ThreadWriteLock, queries: QueryListener): TurnWriter {
  const { timed, straight } = straightStatements(statements, queries);
  const run = (text: string) => timed(text, NO_PARAMETERS, (statement) => statement.run());
  return (db, groups, onCommit) =>
    // Held for the whole call: no other statement of this thread's runs between ours.
    db.connection().execute(async () => {
      if (sqlite.inTransaction) throw new Error('writeInTurns cannot run inside a transaction');
      let held = false;
      const begin = async () => {
        if (!lock.tryAcquire()) await lock.acquire();
        held = true;
        run('begin immediate');
      };
      const commit = (groupsCommitted: number) => {
        run('commit');
        held = false;
        lock.release();
        onCommit(groupsCommitted);
      };
      run('pragma synchronous = NORMAL');
      try {
        await begin();
        for (const [i, group] of groups.entries()) {
          if (i > 0 && lock.priorityWaiting()) {
            commit(i);
            lock.turnedOver();
            await begin();
          }
          group(straight);
        }
        commit(groups.length);
      } catch (err) {
        if (sqlite.inTransaction) {
          try {
            run('rollback');
          } catch {
            // The statement's own error is the one to report.
          }
        }
        throw err;
      } finally {
        if (held) lock.release();
        run(`pragma synchronous = ${SQLITE_SYNCHRONOUS}`);
      }
    });
}

/**
 * The SQLite dialect with a count of those holding or awaiting its one connection (every Kysely
 * statement, transaction and `connection()` acquires it): `transactNow` runs only at zero.
 */
function countingUsers(dialect: SqliteDialect): { dialect: SqliteDialect; inUse: () => boolean } {
  let users = 0;
  const createDriver = dialect.createDriver.bind(dialect);
  dialect.createDriver = () => {
    const driver = createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    const release = driver.releaseConnection.bind(driver);
    driver.acquireConnection = async () => {
      users++;
      try {
        return await acquire();
      } catch (err) {
        users--;
        throw err;
      }
    };
    driver.releaseConnection = async (connection) => {
      users--;
      await release(connection);
    };
    return driver;
  };
  return { dialect, inUse: () => users > 0 };
}

/** PostgreSQL connection pool limits (tests make them small to exhaust the pool quickly). */
export interface PoolOptions {
  /** Connections per process. */
  max?: number;
  /**
   * How long a request waits for a free connection (or a new one) before failing with
   * DatabaseUnavailableError — a 503 with Retry-After, instead of queueing without bound while
   * the database is slow or down.
   */
  acquireTimeoutMs?: number;
  /** SQLite: another thread's connection, sharing the write lock of the process's first (Database.threadLock), which goes first. */
  threadLock?: { buffer: SharedArrayBuffer; holder: number };
  /**
   * PostgreSQL: every transaction of these connections commits without waiting for its WAL flush
   * (`synchronous_commit = off` for the session): for a connection whose writes are all redone or
   * sent again if a crash loses them (the webhook dispatcher's), so that a write of one statement
   * needs no BEGIN, SET LOCAL and COMMIT around it. Ignored on SQLite.
   */
  asynchronousCommit?: boolean;
}

/** PostgreSQL's code for a statement cancelled by `statement_timeout` (or by an operator). */
const QUERY_CANCELED = '57014';

type PooledClient = pg.PoolClient;

/**
 * The pool Kysely gets: pg's, with the database's unavailability turned into
 * DatabaseUnavailableError (503, Retry-After): connection failures (refused, timed out, pool
 * exhausted for `acquireTimeoutMs`) and statements cancelled by `statement_timeout` (a lock held
 * elsewhere, an overloaded server; the statement did nothing, and its transaction is rolled back).
 * Other errors of statements are left alone: they are the query's own outcome.
 */
function failingCleanly(pool: pg.Pool): PostgresPool {
  // One wrapper per pooled client, so Kysely keeps recognising its connections.
  const wrappers = new WeakMap<PooledClient, { query: PooledClient['query']; release: PooledClient['release'] }>();
  const wrap = (client: PooledClient) => {
    let wrapper = wrappers.get(client);
    if (!wrapper) {
      wrapper = {
        query: (async (text: string, values?: unknown[]) => {
          const name = statementName(text);
          try {
            const result = await (name ? client.query({ name, text, values }) : client.query(text, values));
            // A text of several statements (no parameters: one message, one round trip) answers
            // with one result per statement; its caller wants the last, as for a single statement.
            return Array.isArray(result) ? result[result.length - 1] : result;
          } catch (err) {
            if ((err as { code?: string }).code === QUERY_CANCELED) throw new DatabaseUnavailableError(err);
            throw err;
          }
        }) as PooledClient['query'],
        release: (destroy?: boolean | Error) => client.release(destroy),
      };
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
  return {
    async connect() {
      let client: PooledClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw new DatabaseUnavailableError(err);
      }
      return wrap(client);
    },
    end: () => pool.end(),
  };
}

export function createDatabase(config: DatabaseConfig, poolOptions: PoolOptions = {}): Database {
  const commits = listenerSet<[readonly object[]]>();
  const queries = listenerSet<[number, boolean]>();
  if (config.dialect === 'sqlite') {
    const sqlite = openSqlite(config.file);
    const threadLock = poolOptions.threadLock ? new ThreadWriteLock(poolOptions.threadLock.buffer, poolOptions.threadLock.holder, false) : new ThreadWriteLock();
    const statements = withStatementCache(sqlite);
    const { dialect, inUse } = countingUsers(new SqliteDialect({ database: statements, onCreateConnection: async (connection) => lockingWrites(connection, threadLock) }));
    const db = new Kysely<DB>({ dialect: signallingDialect(dialect, commits.fire, 'begin immediate'), log: queryLog(queries) });
    autocommitSignals.set(db, commits.fire);
    nowTransactions.set(db, nowTransaction(sqlite, statements, threadLock, inUse, queries.fire, commits.fire));
    turnWriters.set(db, turnWriter(sqlite, statements, threadLock, queries.fire));
    return {
      db,
      dialect: 'sqlite',
      waitLimitMs: SQLITE_BUSY_TIMEOUT_MS,
      config,
      threadLock,
      onCommit: commits.add,
      onQuery: queries.add,
      async ping() {
        try {
          sqlite.prepare('select 1').get();
          return true;
        } catch {
          return false;
        }
      },
      close: () => db.destroy(),
    };
  }
  const acquireTimeoutMs = poolOptions.acquireTimeoutMs ?? 10_000;
  const pool = new (loadPg().Pool)({
    connectionString: config.url,
    max: poolOptions.max ?? 10,
    connectionTimeoutMillis: acquireTimeoutMs,
    // Sent with the connection's start-up: every statement of every pooled connection is bounded.
    ...(config.statementTimeoutMs ? { statement_timeout: config.statementTimeoutMs } : {}),
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Queued on the new client ahead of the statement it was opened for. Should it fail, the connection
  // is broken and that statement fails too (a session left synchronous would only be slower).
  if (poolOptions.asynchronousCommit) pool.on('connect', (client) => void client.query('set synchronous_commit = off').catch(() => {}));
  const db = new Kysely<DB>({ dialect: signallingDialect(new PostgresDialect({ pool: failingCleanly(pool) }), commits.fire), log: queryLog(queries) });
  autocommitSignals.set(db, commits.fire);
  return {
    db,
    dialect: 'postgres',
    waitLimitMs: acquireTimeoutMs,
    config,
    threadLock: null,
    onCommit: commits.add,
    onQuery: queries.add,
    async ping() {
      try {
        await pool.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}
