import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { workerEntry } from '../worker-entry.js';
import type { Database } from './database.js';

type Logger = { error(obj: object, msg?: string): void };

/** SQLite's own default: a commit that leaves the WAL at this many pages or more checkpoints it. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/**
 * The app's connection's threshold while the thread checkpoints: a backstop that keeps the WAL
 * bounded (32 MiB at 4 KiB pages) should the thread fall behind or die.
 */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 8000;
/** The thread's tag in the threads' SQLite write lock (the app's is 1, the webhook dispatcher's 2). */
const THREAD_HOLDER = 3;
const EVERY_MS = 200;
/** From this size on, a checkpoint ends with a pass that lets the WAL start over (as SQLite's default threshold). */
const RESTART_FRAMES = 1000;
/** After the app is ready: a starting server answers its first requests first (as hourly-job.ts). */
const START_DELAY_MS = 1000;
/**
 * The thread starts once the WAL file has grown this far (a quarter of SQLite's default threshold,
 * so the app's connection never reaches that threshold first): a thread costs some 10 MiB of
 * memory, which a server that writes little (an idle one, a small streamer's) need not pay.
 */
export const WAKE_WAL_BYTES = 1024 * 1024;
/** How often the WAL file's size is looked at until then (a stat; the thread then takes over). */
const WATCH_MS = 500;

/** What the thread starts with. */
export interface CheckpointerThreadData {
  file: string;
  lock: { buffer: SharedArrayBuffer; holder: number };
  everyMs: number;
  restartFrames: number;
  /** Float64Array: see CheckpointStats. */
  stats: SharedArrayBuffer;
}

/** What the thread did so far (shared memory, read at any time). */
export interface CheckpointStats {
  /** Checkpoints that copied pages to the database file. */
  checkpoints: number;
  /** Time those took, in all (ms). */
  ms: number;
  /** Longest one (ms). */
  maxMs: number;
  /** The most frames the WAL held at a checkpoint (its size: frames × (page size + 24 B)). */
  maxWalFrames: number;
  /** Last passes with the threads' write lock held (see the worker). */
  lockedPasses: number;
  /** Frames in the WAL at the thread's latest look (every 200 ms). */
  walFrames: number;
}

/**
 * WAL checkpoints from a thread of their own (SQLite file databases).
 *
 * By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: on the
 * connection that serves requests (better-sqlite3 is synchronous) that commit copies every page
 * changed since the last checkpoint into the database file and fsyncs it while the event loop
 * waits, and every request of that moment with it (bench/README.md, Webhooks: 2–5 a second at 150
 * donations/s, 2–175 ms each on a loaded disk). Here a connection of the thread's own runs
 * `wal_checkpoint(PASSIVE)` every 200 ms, commits going on meanwhile; once the WAL holds 1,000
 * pages a last pass under the threads' write lock copies the rest, so the next write starts the
 * WAL over (wal-checkpointer.worker.ts). The app's connection keeps a far larger threshold as a backstop.
 *
 * Durability is not touched: a commit is durable once its WAL frames are synced (`synchronous =
 * FULL` on the app's connection, as before); a checkpoint only moves durable pages into the
 * database file, syncing the WAL before and the file after.
 */
export class WalCheckpointer {
  readonly #database: Database;
  readonly #logger: Logger | undefined;
  readonly #stats = new Float64Array(new SharedArrayBuffer(6 * 8));
  #worker: Worker | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(database: Database, logger?: Logger) {
    this.#database = database;
    this.#logger = logger;
  }

  get stats(): CheckpointStats {
    const [checkpoints, ms, maxMs, maxWalFrames, lockedPasses, walFrames] = this.#stats;
    return { checkpoints: checkpoints!, ms: ms!, maxMs: maxMs!, maxWalFrames: maxWalFrames!, lockedPasses: lockedPasses!, walFrames: walFrames! };
  }

  /** Whether the thread runs (tests). */
  get running(): boolean {
    return this.#worker !== null;
  }

  /** From `delayMs` on, starts the thread as soon as the WAL file holds `wakeAtBytes` (0: at once). */
  start(delayMs = START_DELAY_MS, wakeAtBytes = WAKE_WAL_BYTES): void {
    const { config, threadLock } = this.#database;
    if (config.dialect !== 'sqlite' || !threadLock || this.#stopped || this.#timer || this.#worker) return;
    const data: CheckpointerThreadData = {
      file: config.file,
      lock: { buffer: threadLock.buffer, holder: THREAD_HOLDER },
      everyMs: EVERY_MS,
      restartFrames: RESTART_FRAMES,
      stats: this.#stats.buffer as SharedArrayBuffer,
    };
    this.#timer = setTimeout(() => this.#watch(data, wakeAtBytes), delayMs);
    this.#timer.unref();
  }

  /** Starts the thread once the WAL file (written by this process or any other) has grown to `wakeAtBytes`. */
  #watch(data: CheckpointerThreadData, wakeAtBytes: number): void {
    this.#timer = null;
    if (this.#stopped) return;
    let size = 0;
    try {
      size = fs.statSync(`${data.file}-wal`).size;
    } catch {
      // No WAL file yet: nothing written since the last connection closed.
    }
    if (size >= wakeAtBytes) return this.#spawn(data);
    this.#timer = setTimeout(() => this.#watch(data, wakeAtBytes), WATCH_MS);
    this.#timer.unref();
  }

  #spawn(data: CheckpointerThreadData): void {
    // Its own chunk in the build (scripts/build.js).
    const [entry, options] = workerEntry(import.meta.url, './wal-checkpointer.worker.ts', '../chunks/wal-checkpointer.worker.js');
    const worker = new Worker(entry, { ...options, workerData: data });
    // Never what keeps the process alive.
    worker.unref();
    this.#worker = worker;
    worker.on('message', (message: { t: 'ready' } | { t: 'failed'; message: string }) => {
      if (this.#worker !== worker) return;
      if (message.t === 'ready') void this.#autocheckpoint(BACKSTOP_AUTOCHECKPOINT_PAGES);
      else this.#logger?.error({ err: { message: message.message } }, 'database: a WAL checkpoint failed; the app checkpoints in its commits again');
    });
    worker.on('error', (err) => this.#logger?.error({ err }, 'database: the WAL checkpoint thread failed; the app checkpoints in its commits again'));
    worker.on('exit', () => {
      // Gone in the middle of its last pass: the lock is free again.
      this.#database.threadLock?.releaseHeldBy(THREAD_HOLDER);
      if (this.#worker !== worker) return;
      this.#worker = null;
      if (!this.#stopped) void this.#autocheckpoint(DEFAULT_AUTOCHECKPOINT_PAGES);
    });
  }

  /** Stops the thread; the app's connection checkpoints in its commits again. Before the database closes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = null;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    // Its exit is awaited now: what keeps the process alive until then.
    worker.ref();
    worker.postMessage('stop');
    await exited;
    await this.#autocheckpoint(DEFAULT_AUTOCHECKPOINT_PAGES);
  }

  async #autocheckpoint(pages: number): Promise<void> {
    try {
      await sql.raw(`pragma wal_autocheckpoint = ${pages}`).execute(this.#database.db);
    } catch (err) {
      this.#logger?.error({ err }, 'database: could not set the WAL checkpoint threshold');
    }
  }
}
