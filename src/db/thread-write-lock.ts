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
 * Two 32-bit words in shared memory (the holder's tag or 0, and the requests' side's waits), then
 * each tag's turns and time held (bench/webhooks.ts reports them). Not re-entrant; a connection holds it from BEGIN to COMMIT/ROLLBACK, or around one writing statement
 * outside a transaction. The requests' side goes first when both wait.
 */
export class ThreadWriteLock {
  readonly #word: Int32Array;
  readonly #heldUs: BigInt64Array;
  #since = 0;
  /** How often, and how long in all, this side waited for the other (bench/webhooks.ts reports it). */
  waits = 0;
  waitedMs = 0;
  /** The longest of those waits (ms), since this was made or the bench last reset it. */
  maxWaitMs = 0;
  /**
   * Of `waitedMs`, the part after the other side had let go: this thread's own way back to the
   * lock (its event loop getting round to the wake-up), not the other side's turn.
   */
  wokenMs = 0;

  constructor(
    /** Shared with the other threads' connections to the same file (transferred to a worker as is). */
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(BYTES),
    /** This side's tag, different on every thread. */
    readonly holder: number = 1,
    /**
     * The requests' side: while it waits, the other side takes no new turn (it would otherwise,
     * being woken first, take several turns in a row while a request waits for its event loop to
     * come round to it).
     */
    readonly priority: boolean = true,
  ) {
    this.#word = new Int32Array(buffer, 0, TURNED_OVER + MAX_TAGS);
    this.#heldUs = new BigInt64Array(buffer, HELD_OFFSET, MAX_TAGS + 1);
  }

  tryAcquire(): boolean {
    if (!this.priority && Atomics.load(this.#word, WAITING) > 0) return false;
    if (Atomics.compareExchange(this.#word, HOLDER, 0, this.holder) !== 0) return false;
    this.#taken();
    return true;
  }

  /**
   * Whether the requests' side is waiting for the lock (or about to take it): a holder on the other
   * side with more to write commits what it has and takes a new turn after it (the webhook
   * dispatcher's batches), so a request waits for one short statement, not for the whole batch.
   */
  priorityWaiting(): boolean {
    return Atomics.load(this.#word, WAITING) > 0;
  }

  /** Counts a turn this side ended early because the requests' side was waiting (bench/webhooks.ts reports them). */
  turnedOver(): void {
    Atomics.add(this.#word, TURNED_OVER + this.holder, 1);
  }

  /** How often the side tagged `holder` took the lock, for how long in all (ms), and how often it ended a turn early for a waiting request, since the buffer was made. */
  turnsOf(holder: number): { turns: number; heldMs: number; turnedOver: number } {
    return { turns: Atomics.load(this.#word, TURNS + holder), heldMs: Number(Atomics.load(this.#heldUs, holder)) / 1000, turnedOver: Atomics.load(this.#word, TURNED_OVER + holder) };
  }

  #taken(): void {
    Atomics.add(this.#word, TURNS + this.holder, 1);
    this.#since = performance.now();
  }

  /** Resolves once this side holds the lock; the thread's event loop runs meanwhile. */
  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    const started = performance.now();
    this.waits += 1;
    if (this.priority) Atomics.add(this.#word, WAITING, 1);
    try {
      for (;;) {
        if (!this.priority) {
          const waiting = Atomics.load(this.#word, WAITING);
          if (waiting > 0) {
            await waitFor(this.#word, WAITING, waiting);
            continue;
          }
        }
        if (Atomics.compareExchange(this.#word, HOLDER, 0, this.holder) === 0) {
          this.#taken();
          break;
        }
        const seen = Atomics.load(this.#word, HOLDER);
        if (seen !== 0) await waitFor(this.#word, HOLDER, seen);
      }
    } finally {
      if (this.priority) {
        Atomics.sub(this.#word, WAITING, 1);
        Atomics.notify(this.#word, WAITING);
      }
    }
    const now = performance.now();
    const released = Number(Atomics.load(this.#heldUs, RELEASED_AT)) / 1000 - performance.timeOrigin;
    if (released > started && released <= now) this.wokenMs += now - released;
    const waited = now - started;
    this.waitedMs += waited;
    if (waited > this.maxWaitMs) this.maxWaitMs = waited;
  }

  release(): void {
    const now = performance.now();
    Atomics.add(this.#heldUs, this.holder, BigInt(Math.round((now - this.#since) * 1000)));
    // Wall-clock µs (each thread has its own timeOrigin): when the lock was last let go.
    Atomics.store(this.#heldUs, RELEASED_AT, BigInt(Math.round((performance.timeOrigin + now) * 1000)));
    Atomics.store(this.#word, HOLDER, 0);
    Atomics.notify(this.#word, HOLDER);
  }

  /** Frees the lock if `holder` still has it: that thread ended (its connection, and its transaction, went with it). */
  releaseHeldBy(holder: number): void {
    if (Atomics.compareExchange(this.#word, HOLDER, holder, 0) === holder) Atomics.notify(this.#word, HOLDER);
  }
}

/** The words: who holds the lock (0: nobody), how many waits of the priority side are under way, then turns per tag, then turns ended early per tag. */
const HOLDER = 0;
const WAITING = 1;
const TURNS = 2;
/** Tags 1–7 (the app 1, the webhook dispatcher 2, the WAL checkpointer 3). */
const MAX_TAGS = 8;
const TURNED_OVER = TURNS + MAX_TAGS;
/** Microseconds held per tag, 64-bit, after the 32-bit words (8-byte aligned), then when the lock was last released. */
const HELD_OFFSET = 4 * (TURNED_OVER + MAX_TAGS);
const RELEASED_AT = MAX_TAGS;
const BYTES = HELD_OFFSET + 8 * (MAX_TAGS + 1);

/** Until the word changes from `seen` (or a second: the timeout only bounds a wait on a holder that vanished, see releaseHeldBy). */
async function waitFor(word: Int32Array, index: number, seen: number): Promise<void> {
  const wait = waitAsync(word, index, seen, 1000);
  if (wait.async) await wait.value;
}

// Node has had Atomics.waitAsync since 16; TypeScript types it from lib ES2024, beyond our target.
const waitAsync = (Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;
