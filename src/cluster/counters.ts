/** What @fastify/rate-limit's stores answer: hits in the current window and the ms left in it. */
export interface CounterState {
  current: number;
  ttl: number;
}

interface Entry {
  current: number;
  /** When the current window started (ms). */
  startedAt: number;
  /** What the last count answered as the time left. */
  ttl: number;
}

/**
 * The rate-limit and log-in backoff counters of a cluster without Redis, kept by the primary so
 * that N workers never allow N × the limit. Fixed windows, as @fastify/rate-limit's in-memory store
 * counts them (with its `continueExceeding` and `exponentialBackoff` options); the least recently
 * used keys are forgotten beyond `capacity`.
 */
export class Counters {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly capacity = 100_000) {}

  incr(key: string, timeWindow: number, max: number, continueExceeding = false, exponentialBackoff = false, now = Date.now()): CounterState {
    let e = this.#entries.get(key);
    if (e) this.#entries.delete(key); // re-inserted below: Map order is recency
    if (!e || e.startedAt + timeWindow <= now) {
      e = { current: 1, startedAt: now, ttl: timeWindow };
    } else if (++e.current > max && continueExceeding) {
      e.startedAt = now;
      e.ttl = timeWindow;
    } else if (e.current > max && exponentialBackoff) {
      const ttl = timeWindow * 2 ** (e.current - max - 1);
      e.startedAt = now;
      e.ttl = Number.isSafeInteger(ttl) ? ttl : Number.MAX_SAFE_INTEGER;
    } else {
      e.ttl = timeWindow - (now - e.startedAt);
    }
    this.#entries.set(key, e);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
    return { current: e.current, ttl: e.ttl };
  }

  /** The state without counting a hit (the log-in backoff peeks before it decides). */
  read(key: string, timeWindow: number, now = Date.now()): CounterState {
    const e = this.#entries.get(key);
    if (!e || e.startedAt + timeWindow <= now) return { current: 0, ttl: 0 };
    return { current: e.current, ttl: timeWindow - (now - e.startedAt) };
  }
}
