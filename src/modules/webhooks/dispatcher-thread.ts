import { Worker } from 'node:worker_threads';
import { workerEntry } from '../../worker-entry.js';
import type { DatabaseConfig, WebhooksConfig } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { ClaimOwner } from '../outbox/claim-owner.js';
import { systemResolver, type Resolver } from './endpoint.js';
import { anySubscriptionKept } from './webhooks.repository.js';

type Logger = { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };

export interface DispatcherThreadOptions {
  config: WebhooksConfig;
  encryptionKey: Buffer;
  owner: ClaimOwner;
  logger?: Logger;
  /** The dispatcher's idle poll (see WebhookDispatcher). */
  pollMs?: number;
}

/** What the thread starts with (structured-cloned; the lock's buffer is shared, not copied). */
export interface DispatcherThreadData {
  database: DatabaseConfig;
  threadLock: { buffer: SharedArrayBuffer; holder: number } | null;
  config: WebhooksConfig;
  encryptionKey: Uint8Array;
  owner: { node: string; pid: number; incarnation: string };
  pollMs: number | null;
  customResolver: boolean;
}

export type ToDispatcherThread =
  | { t: 'kick' }
  | { t: 'stop' }
  | { t: 'resolver'; custom: boolean }
  | { t: 'resolved'; id: number; addresses?: { address: string; family: number }[]; error?: string };

export type FromDispatcherThread =
  /** `tid`: the thread's id in the OS (Linux). */
  | { t: 'started'; tid: number | null }
  | { t: 'stopped' }
  | { t: 'log'; level: 'warn' | 'error' | 'info'; obj: object; msg?: string }
  | { t: 'resolve'; id: number; hostname: string };

/** The tag of the dispatcher thread's connection in the threads' SQLite write lock (the app's is 1). */
const THREAD_HOLDER = 2;
/** While no thread runs: how often subscriptions made elsewhere (another process, node or cluster worker) are looked for. */
const IDLE_CHECK_MS = 1000;
/** After a commit here, how soon (at most) whether it made the first subscription is checked. */
const COMMIT_CHECK_MS = 200;

/** The dispatcher's own first poll (WebhookDispatcher's default pollMs). */
const FIRST_POLL_MS = 250;

const KICK: ToDispatcherThread = { t: 'kick' };

/**
 * The app's side of the webhook dispatcher (issue 11: delivery off the request path). The
 * dispatcher (webhooks.dispatcher.ts) runs whole in a worker thread (dispatcher.worker.ts) with a
 * database connection of its own: its fan-out, leases, signing, HTTP and attempt records take no
 * time of the event loop that serves requests. On SQLite (WAL) the two connections share the file;
 * their writes take turns through the threads' write lock (db/thread-write-lock.ts), for which a
 * request waits without blocking its event loop, and the thread keeps its transactions short. On
 * PostgreSQL the thread has its own pool of two connections.
 *
 * This side only tells the thread that something committed (one message per turn of the event
 * loop at most) and prints its log lines. The thread starts when there is a subscription to
 * deliver to (at start, or seen after a commit here or by an idle check), so a server without
 * webhooks starts and runs no thread; once started it runs until stop(). A thread that dies is
 * started again by the next check: its leases are released as a dead process's are.
 */
export class WebhookDispatcherThread {
  readonly #database: Database;
  readonly #opts: DispatcherThreadOptions;
  #resolver: Resolver = systemResolver;
  #worker: Worker | null = null;
  #starting: Promise<void> | null = null;
  #stopped = true;
  #kickQueued = false;
  #checkTimer: NodeJS.Timeout | null = null;
  #lastCheck = 0;
  #unsubscribe: (() => void) | null = null;
  #resolveStopped: (() => void) | null = null;
  #tid: number | null = null;

  constructor(database: Database, opts: DispatcherThreadOptions) {
    this.#database = database;
    this.#opts = opts;
  }

  /** DNS as the SSRF guard sees it, in the app's thread and the dispatcher's (tests point names elsewhere). */
  get resolver(): Resolver {
    return this.#resolver;
  }

  set resolver(resolver: Resolver) {
    this.#resolver = resolver;
    this.#worker?.postMessage({ t: 'resolver', custom: resolver !== systemResolver } satisfies ToDispatcherThread);
  }

  /** The running thread's id in the OS once it started (Linux): tests read its scheduling class and nice, the bench its CPU time. */
  get osThreadId(): number | null {
    return this.#worker ? this.#tid : null;
  }

  /** Whether the dispatcher thread runs (tests). */
  get running(): boolean {
    return this.#worker !== null;
  }

  /**
   * Starts watching; if there is anything to deliver to, resolves once the thread's first round is
   * over. `'poll'`: resolves at once, and the look for subscriptions (and the thread's start) comes
   * a moment later — a starting server answers its first requests first; a commit meanwhile looks at once.
   */
  async start(firstRound: 'now' | 'poll' = 'now'): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#unsubscribe = this.#database.onCommit(() => this.kick());
    if (firstRound === 'poll') return this.#scheduleCheck(this.#opts.pollMs ?? FIRST_POLL_MS);
    await this.#check();
  }

  /** Something committed: the thread looks now (or, with no thread yet, whether one is needed). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#worker) {
      // One message per turn however many commits it had.
      if (this.#kickQueued) return;
      this.#kickQueued = true;
      queueMicrotask(() => {
        this.#kickQueued = false;
        this.#worker?.postMessage(KICK);
      });
      return;
    }
    if (!this.#starting) this.#scheduleCheck(Math.max(0, this.#lastCheck + COMMIT_CHECK_MS - Date.now()));
  }

  /** Stops the thread: it stops claiming, finishes the requests under way (each within its timeout) and closes its connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#checkTimer) clearTimeout(this.#checkTimer);
    this.#checkTimer = null;
    await this.#starting;
    const worker = this.#worker;
    if (!worker) return;
    const stopped = new Promise<void>((resolve) => (this.#resolveStopped = resolve));
    worker.postMessage({ t: 'stop' } satisfies ToDispatcherThread);
    await stopped;
    await worker.terminate();
  }

  #scheduleCheck(delay: number): void {
    if (this.#stopped || this.#worker || this.#checkTimer) return;
    this.#checkTimer = setTimeout(() => {
      this.#checkTimer = null;
      void this.#check();
    }, delay);
    this.#checkTimer.unref();
  }

  async #check(): Promise<void> {
    if (this.#stopped || this.#worker || this.#starting) return;
    this.#lastCheck = Date.now();
    let needed = false;
    try {
      needed = await anySubscriptionKept(this.#database.db);
    } catch (err) {
      this.#opts.logger?.error({ err }, 'webhooks: could not look for subscriptions; will retry');
    }
    if (!needed) return this.#scheduleCheck(IDLE_CHECK_MS);
    this.#starting = this.#spawn().finally(() => (this.#starting = null));
    await this.#starting;
  }

  #spawn(): Promise<void> {
    const lock = this.#database.threadLock;
    const data: DispatcherThreadData = {
      database: this.#database.config,
      threadLock: lock ? { buffer: lock.buffer, holder: THREAD_HOLDER } : null,
      config: this.#opts.config,
      encryptionKey: new Uint8Array(this.#opts.encryptionKey),
      owner: { node: this.#opts.owner.node, pid: this.#opts.owner.pid, incarnation: this.#opts.owner.incarnation },
      pollMs: this.#opts.pollMs ?? null,
      customResolver: this.#resolver !== systemResolver,
    };
    // Its own chunk in the build (scripts/build.js).
    const [entry, options] = workerEntry(import.meta.url, './dispatcher.worker.ts', '../../chunks/dispatcher.worker.js');
    const worker = new Worker(entry, { ...options, workerData: data });
    // Never what keeps the process alive: stop() ends it.
    worker.unref();
    this.#worker = worker;
    this.#tid = null;
    return new Promise<void>((resolve) => {
      worker.on('message', (message: FromDispatcherThread) => {
        switch (message.t) {
          case 'started':
            this.#tid = message.tid;
            return resolve();
          case 'stopped':
            resolve();
            this.#resolveStopped?.();
            return;
          case 'log':
            return this.#opts.logger?.[message.level](message.obj, message.msg);
          case 'resolve':
            this.#resolver(message.hostname).then(
              (addresses) => worker.postMessage({ t: 'resolved', id: message.id, addresses: addresses.map((a) => ({ address: a.address, family: a.family })) } satisfies ToDispatcherThread),
              (err: Error) => worker.postMessage({ t: 'resolved', id: message.id, error: err.message } satisfies ToDispatcherThread),
            );
            return;
        }
      });
      worker.on('error', (err) => this.#opts.logger?.error({ err }, 'webhooks: the dispatcher thread failed'));
      worker.on('exit', (code) => {
        // Its connection closed with it, rolling back whatever it had open: the lock is free.
        lock?.releaseHeldBy(THREAD_HOLDER);
        resolve();
        this.#resolveStopped?.();
        if (this.#worker !== worker) return;
        this.#worker = null;
        if (this.#stopped) return;
        this.#opts.logger?.error({ code }, 'webhooks: the dispatcher thread exited; starting another');
        this.#scheduleCheck(IDLE_CHECK_MS);
      });
    });
  }
}
