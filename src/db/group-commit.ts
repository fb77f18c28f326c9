import { DatabaseUnavailableError } from './unavailable.js';

/**
 * What a batch decided for one of its items. `retry`: the item could not be settled in this batch
 * (it collided with another item or with a concurrent writer) and goes into the next one.
 */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown } | { retry: true };

export interface GroupCommitOptions {
  /** Items per batch at most. */
  maxBatch?: number;
  /**
   * Batches in flight at once. One is enough for SQLite (one writer); on PostgreSQL a second lane
   * lets the next batch read while the previous one waits for its COMMIT's WAL flush.
   */
  lanes?: number;
  /** How often one item may be sent back for `retry` before it fails. */
  maxRetries?: number;
  /** Gather items this long before a batch starts (default: only those of the same turn of the event loop); asked at each batch. */
  gatherMs?: number | (() => number);
  /**
   * With no batch in flight and no gathering, an item starts its batch at once (after the caller's
   * current step, in a microtask) instead of in the turn's check phase: when idle there is nothing
   * to wait for, and the batch would be that one item anyway. Items that arrive while a batch is in
   * flight still gather as usual.
   */
  startWhenIdle?: boolean;
}

/** An item sent back for retry more often than `maxRetries`: something keeps colliding with it. */
export class GroupCommitRetryError extends Error {
  constructor(attempts: number) {
    super(`The write collided with concurrent writes ${attempts} times in a row; retry the request.`);
  }
}

interface Entry<I, R> {
  item: I;
  attempts: number;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit for set-based writes: items that arrive together are handed to `process` as one
 * array, which writes them all in one transaction with multi-row statements and says per item what
 * happened. A durable commit costs a WAL flush (fsync) and each statement a round trip, so N items
 * per batch pay both once instead of N times.
 *
 * `process` resolves only after its COMMIT has returned, so no item settles before its write is
 * durable. If it throws for a batch of several items (one item's row broke a statement), every item
 * is processed again alone, so only the culprit fails; a database that is unreachable fails them all
 * at once instead.
 */
export class GroupCommit<I, R> {
  readonly #queue: Entry<I, R>[] = [];
  readonly #maxBatch: number;
  readonly #lanes: number;
  readonly #maxRetries: number;
  readonly #gatherMs: () => number;
  readonly #startWhenIdle: boolean;
  #inFlight = 0;
  #scheduled = false;

  constructor(
    private readonly process: (items: readonly I[]) => Promise<ItemOutcome<R>[]>,
    { maxBatch = 256, lanes = 1, maxRetries = 5, gatherMs = 0, startWhenIdle = false }: GroupCommitOptions = {},
  ) {
    this.#startWhenIdle = startWhenIdle;
    this.#gatherMs = typeof gatherMs === 'number' ? () => gatherMs : gatherMs;
    this.#maxBatch = maxBatch;
    this.#lanes = lanes;
    this.#maxRetries = maxRetries;
  }

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, attempts: 0, resolve, reject });
      this.#schedule();
    });
  }

  /** Starts a batch on the next turn of the event loop, or after gatherMs (arrivals meanwhile join it), if a lane is free. */
  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0 || this.#inFlight >= this.#lanes) return;
    this.#scheduled = true;
    const flush = () => {
      this.#scheduled = false;
      void this.#flush();
    };
    const gather = this.#gatherMs();
    if (gather > 0) setTimeout(flush, gather);
    else if (this.#startWhenIdle && this.#inFlight === 0) queueMicrotask(flush);
    else setImmediate(flush);
  }

  async #flush(): Promise<void> {
    if (this.#queue.length === 0 || this.#inFlight >= this.#lanes) return;
    const entries = this.#queue.splice(0, this.#maxBatch);
    this.#inFlight++;
    this.#schedule();
    try {
      await this.#settle(entries);
    } finally {
      this.#inFlight--;
      this.#schedule();
    }
  }

  async #settle(entries: Entry<I, R>[]): Promise<void> {
    let outcomes: ItemOutcome<R>[];
    try {
      outcomes = await this.process(entries.map((e) => e.item));
    } catch (error) {
      if (entries.length === 1 || error instanceof DatabaseUnavailableError) {
        for (const entry of entries) entry.reject(error);
        return;
      }
      for (const entry of entries) await this.#settle([entry]);
      return;
    }
    const retries: Entry<I, R>[] = [];
    entries.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if ('retry' in outcome) {
        if (++entry.attempts > this.#maxRetries) entry.reject(new GroupCommitRetryError(entry.attempts));
        else retries.push(entry);
      } else if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
    // Ahead of newer arrivals: they have waited a whole batch already.
    this.#queue.unshift(...retries);
  }
}
