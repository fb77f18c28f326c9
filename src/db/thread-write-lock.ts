/**
 * The SQLite write lock between the threads of one process, taken before SQLite's own (issue 11:
 * the webhook dispatcher writes from a worker thread with a connection of its own).
 *
 * Without it, a request's `BEGIN IMMEDIATE` that met the dispatcher thread's open transaction would
 * wait in SQLite's busy handler, which sleeps the calling thread: the event loop serving every
 * request would stop for that time. With it, the waiting side waits with `Atomics.waitAsync`, the
 * event loop free meanwhile, and reaches SQLite only once the other thread has committed; SQLite's
 * busy timeout is then left for other processes (the CLI, a backup), as before.
 *
 * One 32-bit word in shared memory: 0 free, else the holder's tag. Not re-entrant; a connection
 * holds it from BEGIN to COMMIT/ROLLBACK, or around one writing statement outside a transaction.
 */
export class ThreadWriteLock {
  readonly #word: Int32Array;

  constructor(
    /** Shared with the other threads' connections to the same file (transferred to a worker as is). */
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4),
    /** This side's tag, different on every thread. */
    readonly holder: number = 1,
  ) {
    this.#word = new Int32Array(buffer);
  }

  tryAcquire(): boolean {
    return Atomics.compareExchange(this.#word, 0, 0, this.holder) === 0;
  }

  /** Resolves once this side holds the lock; the thread's event loop runs meanwhile. */
  async acquire(): Promise<void> {
    while (!this.tryAcquire()) {
      const seen = Atomics.load(this.#word, 0);
      if (seen === 0) continue;
      // The timeout only bounds a wait on a holder that vanished without a release (see releaseHeldBy).
      const wait = waitAsync(this.#word, 0, seen, 1000);
      if (wait.async) await wait.value;
    }
  }

  release(): void {
    Atomics.store(this.#word, 0, 0);
    Atomics.notify(this.#word, 0);
  }

  /** Frees the lock if `holder` still has it: that thread ended (its connection, and its transaction, went with it). */
  releaseHeldBy(holder: number): void {
    if (Atomics.compareExchange(this.#word, 0, holder, 0) === holder) Atomics.notify(this.#word, 0);
  }
}

// Node has had Atomics.waitAsync since 16; TypeScript types it from lib ES2024, beyond our target.
const waitAsync = (Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;
