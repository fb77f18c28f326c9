import type { Database } from './database.js';

export interface CommitWokenLoopOptions {
  /** The idle poll: how soon rows written by other processes are found. */
  pollMs: number;
  /**
   * One round of the work. A round that throws is reported and retried after ten idle polls, twice
   * that after each further failure in a row, at most `maxRetryMs` apart (a commit still starts one
   * at once).
   */
  round: () => Promise<void>;
  /**
   * Whether a commit of this process (with its notes) calls for a round now; by default every
   * commit does. The outbox relay says no for a commit it has already published from: only marks
   * are left, and the next poll writes them.
   */
  commitNeedsRound?: (notes: readonly object[]) => boolean;
  /** `failures`: rounds failed in a row, this one included; `retryMs`: when the next one runs. */
  onError: (err: unknown, failures: number, retryMs: number) => void;
  /** A round succeeded after `failures` failed in a row. */
  onRecovered?: (failures: number) => void;
  /** Default 5 s: once the failure is over (a broker back), the work resumes within it. */
  maxRetryMs?: number;
}

/**
 * Runs background work over the database in rounds, one at a time: at once after every commit of
 * this process (the database's `onCommit`), every `pollMs` when idle, later after a failure. A
 * commit that arrives during a round means one more round right after it, since the round may have
 * read before that commit. The outbox relay and the webhook dispatcher run on it.
 */
export class CommitWokenLoop {
  readonly #database: Database;
  readonly #opts: CommitWokenLoopOptions;
  #timer: NodeJS.Timeout | null = null;
  #immediate: NodeJS.Immediate | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #kicked = false;
  #stopped = true;
  #failures = 0;
  #unsubscribe: (() => void) | null = null;

  constructor(database: Database, opts: CommitWokenLoopOptions) {
    this.#database = database;
    this.#opts = opts;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Starts the rounds; resolves when the first one is over. `firstRound: 'poll'` starts idle
   * instead: commits wake it at once as always, and what was already waiting is found by the first
   * poll (`pollMs` later), so the start does none of the work.
   */
  async start(firstRound: 'now' | 'poll' = 'now'): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    const needsRound = this.#opts.commitNeedsRound;
    this.#unsubscribe = this.#database.onCommit((notes) => {
      if (!needsRound || needsRound(notes)) this.kick();
    });
    if (firstRound === 'poll') {
      this.#schedule(this.#opts.pollMs);
      return;
    }
    this.#run();
    await this.#running;
  }

  /**
   * A round now, or right after the one under way. "Now" is a microtask: the round starts as soon
   * as the committing code's current step is done, in the same phase of the event loop — so what
   * it hands on with setImmediate (the hub's fan-out slices) runs in this turn's check phase,
   * ahead of the next turn's timers and I/O (on SQLite: the next request's commit and its fsync).
   */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#kicked) return;
    this.#kicked = true;
    queueMicrotask(() => {
      this.#kicked = false;
      this.#run();
    });
  }

  /** No more rounds; resolves when the one under way is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#timer = null;
    this.#immediate = null;
    await this.#running;
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (delay === 0) {
      // A round right after a round (a commit came in during it): on this turn's check phase
      // (setImmediate), yielding to I/O first — a round whose own work commits must not starve the
      // event loop — but not in the next timers phase: a zero-delay timer waits at least 1 ms.
      if (!this.#immediate) this.#immediate = setImmediate(() => this.#run());
      return;
    }
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }

  #run(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#immediate = null;
    if (this.#running || this.#stopped) return;
    this.#again = false;
    this.#running = (async () => {
      let retryMs = -1;
      try {
        await this.#opts.round();
        if (this.#failures > 0) this.#opts.onRecovered?.(this.#failures);
        this.#failures = 0;
      } catch (err) {
        this.#failures++;
        // Backing off: a broker or database that fails every round (down, or each call waiting out
        // its timeout) is not hammered, and the log gets a line per retry, not per poll.
        retryMs = Math.min(this.#opts.pollMs * 10 * 2 ** Math.min(this.#failures - 1, 20), Math.max(this.#opts.maxRetryMs ?? 5000, this.#opts.pollMs * 10));
        this.#opts.onError(err, this.#failures, retryMs);
      }
      this.#running = null;
      this.#schedule(retryMs >= 0 ? retryMs : this.#again ? 0 : this.#opts.pollMs);
    })();
  }
}
