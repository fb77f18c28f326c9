/**
 * Coalesces concurrent point reads into one statement, without ever answering from a read that
 * started before the caller asked: callers arriving while a batch is in flight wait for the next
 * one. So every answer is at least as fresh as a read of its own would have been, and a burst of N
 * requests costs one round trip instead of N — the round trip, not the query, is what a PostgreSQL
 * read costs a busy server (bench/README.md).
 *
 * `load` gets the distinct keys of one batch and returns what it found; keys it leaves out resolve
 * to undefined. A failed batch rejects every caller in it. With `maxWaitMs`, a caller still
 * unanswered after that long is rejected with `timeoutError()` (a slow database must not hold
 * every queued request for as long as the batch ahead of them hangs); the batch itself goes on.
 */
export function batchedRead<K, V>(
  load: (keys: K[]) => Promise<Map<K, V>>,
  options: { maxBatch?: number; maxWaitMs?: number; timeoutError?: () => Error } = {},
): (key: K) => Promise<V | undefined> {
  const { maxBatch = 500, maxWaitMs, timeoutError = () => new Error('the read timed out') } = options;
  type Waiter = { resolve(value: V | undefined): void; reject(err: unknown): void };
  let waiting = new Map<K, Waiter[]>();
  let inFlight = false;

  const flush = (): void => {
    if (inFlight || waiting.size === 0) return;
    let batch = waiting;
    if (batch.size > maxBatch) {
      batch = new Map([...waiting].slice(0, maxBatch));
      for (const key of batch.keys()) waiting.delete(key);
    } else {
      waiting = new Map();
    }
    inFlight = true;
    load([...batch.keys()]).then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      },
      (err: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      },
    ).finally(() => {
      inFlight = false;
      flush();
    });
  };

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      let waiter: Waiter = { resolve, reject };
      if (maxWaitMs !== undefined) {
        const timer = setTimeout(() => reject(timeoutError()), maxWaitMs);
        waiter = {
          resolve: (value) => (clearTimeout(timer), resolve(value)),
          reject: (err) => (clearTimeout(timer), reject(err)),
        };
      }
      const waiters = waiting.get(key);
      if (waiters) waiters.push(waiter);
      else waiting.set(key, [waiter]);
      flush();
    });
}
