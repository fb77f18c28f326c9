/**
 * Coalesces concurrent point reads into one statement, without ever answering from a read that
 * started before the caller asked: callers arriving while a batch is in flight wait for the next
 * one. So every answer is at least as fresh as a read of its own would have been, and a burst of N
 * requests costs one round trip instead of N — the round trip, not the query, is what a PostgreSQL
 * read costs a busy server (bench/README.md).
 *
 * `load` gets the distinct keys of one batch and returns what it found; keys it leaves out resolve
 * to undefined. A failed batch rejects every caller in it.
 */
export function batchedRead<K, V>(load: (keys: K[]) => Promise<Map<K, V>>, maxBatch = 500): (key: K) => Promise<V | undefined> {
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
      const waiters = waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      flush();
    });
}
