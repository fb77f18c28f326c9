import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GroupCommit, GroupCommitRetryError, type ItemOutcome } from '../../src/db/group-commit.js';
import { DatabaseUnavailableError } from '../../src/db/unavailable.js';

/** A GroupCommit whose batches are recorded and decided by `decide` (no database: the queueing alone). */
function recorder<R>(decide: (items: readonly number[]) => Promise<ItemOutcome<R>[]>, options = {}) {
  const batches: number[][] = [];
  const commit = new GroupCommit<number, R>(async (items) => {
    batches.push([...items]);
    return decide(items);
  }, options);
  return { commit, batches };
}

describe('GroupCommit', () => {
  test('items submitted together form one batch; each gets its own outcome', async () => {
    const { commit, batches } = recorder<number>(async (items) => items.map((n) => (n % 2 ? { ok: true, value: n * 10 } : { ok: false, error: new Error(`odd only: ${n}`) })));
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => commit.submit(n)));
    assert.deepEqual(batches, [[1, 2, 3, 4, 5]]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      [10, 'odd only: 2', 30, 'odd only: 4', 50],
    );
  });

  test('maxBatch splits a burst; with one lane the next batch starts after the previous one settled', async () => {
    let running = 0;
    let most = 0;
    const { commit, batches } = recorder<number>(
      async (items) => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return items.map((n) => ({ ok: true, value: n }));
      },
      { maxBatch: 3 },
    );
    assert.deepEqual(await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => commit.submit(n))), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(batches, [[1, 2, 3], [4, 5, 6], [7]]);
    assert.equal(most, 1);
  });

  test("startWhenIdle: an item with nothing in flight starts its batch before the turn's check phase; items of one step still form one batch; later arrivals gather while it runs", async () => {
    const started: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { commit, batches } = recorder<number>(
      async (items) => {
        started.push(`batch ${items.join(',')}`);
        if (items[0] === 1) await held;
        return items.map((n) => ({ ok: true, value: n }));
      },
      { startWhenIdle: true },
    );
    // Queued first: a batch started in the check phase would come after it.
    setImmediate(() => started.push('check phase'));
    const first = [commit.submit(1), commit.submit(2)];
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['batch 1,2', 'check phase'], 'idle: at once, both items of the step in it');
    const later = [commit.submit(3), commit.submit(4)];
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1, 2]], 'a batch in flight: newer items wait (one lane)');
    release();
    assert.deepEqual(await Promise.all([...first, ...later]), [1, 2, 3, 4]);
    assert.deepEqual(batches, [[1, 2], [3, 4]]);
  });

  test('two lanes run two batches at once, never more', async () => {
    let running = 0;
    let most = 0;
    const { commit } = recorder<number>(
      async (items) => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return items.map((n) => ({ ok: true, value: n }));
      },
      { maxBatch: 2, lanes: 2 },
    );
    await Promise.all(Array.from({ length: 12 }, (_, n) => commit.submit(n)));
    assert.equal(most, 2);
  });

  test('an item sent back for retry goes into the next batch, ahead of newer items', async () => {
    const seen = new Set<number>();
    const { commit, batches } = recorder<string>(async (items) =>
      items.map((n) => {
        if (n === 2 && !seen.has(n)) {
          seen.add(n);
          return { retry: true };
        }
        return { ok: true, value: `done ${n}` };
      }),
    );
    const first = Promise.all([1, 2, 3].map((n) => commit.submit(n)));
    await new Promise((resolve) => setImmediate(resolve));
    const later = commit.submit(4);
    assert.deepEqual(await first, ['done 1', 'done 2', 'done 3']);
    assert.equal(await later, 'done 4');
    assert.deepEqual(batches, [[1, 2, 3], [2, 4]]);
  });

  test('an item that keeps colliding fails after maxRetries with a message saying to retry', async () => {
    const { commit, batches } = recorder<number>(async (items) => items.map(() => ({ retry: true })), { maxRetries: 2 });
    await assert.rejects(commit.submit(1), (err: unknown) => err instanceof GroupCommitRetryError && /retry the request/.test((err as Error).message));
    assert.equal(batches.length, 3);
  });

  test('a batch that throws is redone item by item, so only the culprit fails', async () => {
    const { commit, batches } = recorder<number>(async (items) => {
      if (items.includes(3)) throw new Error('row 3 breaks the statement');
      return items.map((n) => ({ ok: true, value: n }));
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => commit.submit(n)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(batches, [[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  test('an unreachable database fails the whole batch at once (no item-by-item retry)', async () => {
    const { commit, batches } = recorder<number>(async () => {
      throw new DatabaseUnavailableError(new Error('connection refused'));
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => commit.submit(n)));
    assert.ok(results.every((r) => r.status === 'rejected' && r.reason instanceof DatabaseUnavailableError));
    assert.deepEqual(batches, [[1, 2, 3]]);
  });
});
