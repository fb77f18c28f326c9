import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { batchedRead } from '../../src/db/batched-read.js';

/** A load function whose batches the test finishes by hand; it answers each key with the batch number. */
function manualLoad() {
  const batches: { keys: number[]; finish(): void; fail(err: Error): void }[] = [];
  const load = (keys: number[]) =>
    new Promise<Map<number, string>>((resolve, reject) => {
      const n = batches.length + 1;
      batches.push({ keys, finish: () => resolve(new Map(keys.filter((k) => k > 0).map((k) => [k, `batch ${n}`]))), fail: reject });
    });
  return { batches, load };
}

test('callers arriving while a batch is in flight are answered by the next batch, never by the one already running', async () => {
  const { batches, load } = manualLoad();
  const read = batchedRead(load);
  const first = read(1);
  assert.deepEqual(batches.map((b) => b.keys), [[1]], 'the first call is sent at once');
  const late = [read(1), read(2), read(2), read(3)];
  assert.equal(batches.length, 1, 'nothing else is sent while a batch is in flight');
  batches[0]!.finish();
  assert.equal(await first, 'batch 1');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(batches[1]?.keys, [1, 2, 3], 'one statement for every waiting key, each key once');
  batches[1]!.finish();
  assert.deepEqual(await Promise.all(late), ['batch 2', 'batch 2', 'batch 2', 'batch 2']);
});

test('keys the load leaves out are undefined; a failed batch rejects its callers only', async () => {
  const { batches, load } = manualLoad();
  const read = batchedRead(load);
  const missing = read(-1);
  batches[0]!.finish();
  assert.equal(await missing, undefined);
  await new Promise((r) => setImmediate(r));
  const failing = read(5);
  const next = read(6);
  batches[1]!.fail(new Error('connection lost'));
  await assert.rejects(failing, /connection lost/);
  await new Promise((r) => setImmediate(r));
  batches[2]!.finish();
  assert.equal(await next, 'batch 3');
});

test('a batch holds at most maxBatch keys; the rest go in the following one', async () => {
  const { batches, load } = manualLoad();
  const read = batchedRead(load, { maxBatch: 2 });
  const calls = [read(1), read(2), read(3), read(4), read(5)];
  batches[0]!.finish();
  await new Promise((r) => setImmediate(r));
  batches[1]!.finish();
  await new Promise((r) => setImmediate(r));
  batches[2]!.finish();
  assert.deepEqual(batches.map((b) => b.keys), [[1], [2, 3], [4, 5]]);
  assert.deepEqual(await Promise.all(calls), ['batch 1', 'batch 2', 'batch 2', 'batch 3', 'batch 3']);
});

test('with maxWaitMs, callers stuck behind a hanging batch are rejected with the given error; the batch goes on', async (t) => {
  // The clock is the test's: on a loaded machine a real 20-ms timer could also fire while the last
  // read waits for its batch (one CI run failed that way), which is the timeout working, not a fault.
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const { batches, load } = manualLoad();
  const read = batchedRead(load, { maxWaitMs: 20, timeoutError: () => new Error('busy') });
  const hanging = read(1);
  const queued = read(2);
  let gaveUp = false;
  const rejected = Promise.all([assert.rejects(queued, /busy/), assert.rejects(hanging, /busy/)]).then(() => (gaveUp = true));
  mock.timers.tick(19);
  await new Promise((r) => setImmediate(r));
  assert.equal(gaveUp, false, 'nobody gives up before maxWaitMs');
  mock.timers.tick(1);
  await rejected;
  batches[0]!.finish();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(batches[1]?.keys, [2], 'the queued key is still read once the batch ahead returns (nobody waits for it)');
  batches[1]!.finish();
  const later = read(3);
  await new Promise((r) => setImmediate(r));
  batches[2]!.finish();
  assert.equal(await later, 'batch 3');
});
