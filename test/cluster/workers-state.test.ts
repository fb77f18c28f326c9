import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BrokerAuthority } from '../../src/cluster/broker-authority.js';
import { Counters } from '../../src/cluster/counters.js';
import type { ToWorker } from '../../src/cluster/messages.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import type { Publication, PublishOptions } from '../../src/realtime/broker.js';
import { sleep, until } from '../wait.js';
import { ipcCluster } from './ipc-pair.js';

const H: PublishOptions = { historySize: 10, historyTtlMs: 60_000, historyMetaTtlMs: 0 };

describe('workers share one broker through the primary', () => {
  test('a publication from one worker reaches every subscribed worker once, with one stream per channel', async () => {
    const cluster = ipcCluster();
    const a = cluster.worker(1);
    const b = cluster.worker(2);
    const got: Record<string, Publication[]> = { a: [], b: [] };
    a.setHandler((_c, pub) => got.a!.push(pub));
    b.setHandler((_c, pub) => got.b!.push(pub));
    const c = '$alerts:donation_1';
    await a.subscribe(c);
    await b.subscribe(c);
    await b.subscribe(c); // a second subscriber of the same worker: still one delivery to it
    const p1 = await a.publish(c, '{"n":1}', H);
    const p2 = await b.publish(c, '{"n":2}', H);
    assert.deepEqual([p1.offset, p2.offset], [1, 2]);
    assert.equal(p1.epoch, p2.epoch);
    await until(() => got.a!.length === 2 && got.b!.length === 2, 20_000, 'deliveries');
    await sleep(20);
    assert.deepEqual(got.a, got.b);
    assert.deepEqual((await b.history(c)).position, { offset: 2, epoch: p1.epoch });
    cluster.close();
  });

  test('a relay round reaches each worker as one message, in order; an answer never overtakes what was assigned before it', async () => {
    const sent: { to: number; message: ToWorker }[] = [];
    const memory = new MemoryBroker();
    const authority = new BrokerAuthority(memory, (to, message) => sent.push({ to, message }));
    await authority.handle(1, 'broker.subscribe', ['a']);
    await authority.handle(2, 'broker.subscribe', ['a']);
    await authority.handle(2, 'broker.subscribe', ['b']);
    sent.length = 0;
    // What the relay does in a round: several publications, then flush.
    for (const [channel, n] of [['a', 1], ['b', 2], ['a', 3], ['nobody', 4]] as const) await memory.publish(channel, `{"n":${n}}`, H);
    authority.flush();
    const pubs = (to: number) => sent.filter((s) => s.to === to).map((s) => (s.message.oa === 'pubs' ? s.message.pubs.map(([channel, offset, , data]) => [channel, offset, data]) : s.message.oa));
    assert.deepEqual(pubs(1), [[['a', 1, '{"n":1}'], ['a', 2, '{"n":3}']]]);
    assert.deepEqual(pubs(2), [[['a', 1, '{"n":1}'], ['b', 1, '{"n":2}'], ['a', 2, '{"n":3}']]]);
    // Assigned, not flushed yet: a worker's request answered now gets them first.
    sent.length = 0;
    await memory.publish('a', '{"n":5}', H);
    const position = await authority.handle(1, 'broker.history', ['a', { limit: 0 }]);
    sent.push({ to: 1, message: { oa: 'res', id: 1, ok: true, value: position } });
    assert.deepEqual(pubs(1), [[['a', 3, '{"n":5}']], 'res']);
    // Without a flush, the next turn of the event loop sends the rest (worker 2's copy).
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(pubs(2), [[['a', 3, '{"n":5}']]]);
    await memory.close();
  });

  test('a worker that exits stops getting publications; the others keep theirs', async () => {
    const cluster = ipcCluster();
    const a = cluster.worker(1);
    const b = cluster.worker(2);
    const got: string[] = [];
    b.setHandler((_c, pub) => got.push(pub.data));
    await a.subscribe('ch');
    await b.subscribe('ch');
    cluster.disconnect(1);
    await assert.rejects(a.publish('ch', '1', H), /primary process of this cluster is gone/);
    await b.publish('ch', '2', H);
    await until(() => got.length === 1, 20_000, 'delivery to the survivor');
    assert.deepEqual(got, ['2']);
    cluster.close();
  });
});

describe('the primary counters (rate limits of all workers)', () => {
  test('counts a fixed window as @fastify/rate-limit does, one count per hit whatever the worker', () => {
    const c = new Counters();
    assert.deepEqual(c.incr('k', 60_000, 2, false, false, 1000), { current: 1, ttl: 60_000 });
    assert.deepEqual(c.incr('k', 60_000, 2, false, false, 11_000), { current: 2, ttl: 50_000 });
    assert.deepEqual(c.incr('k', 60_000, 2, false, false, 21_000), { current: 3, ttl: 40_000 });
    assert.deepEqual(c.read('k', 60_000, 31_000), { current: 3, ttl: 30_000 });
    assert.deepEqual(c.incr('k', 60_000, 2, false, false, 61_000), { current: 1, ttl: 60_000 }, 'a new window');
    assert.deepEqual(c.read('other', 60_000, 61_000), { current: 0, ttl: 0 });
  });

  test('continueExceeding restarts the window on every hit over the limit', () => {
    const c = new Counters();
    c.incr('k', 1000, 1, true, false, 0);
    assert.deepEqual(c.incr('k', 1000, 1, true, false, 500), { current: 2, ttl: 1000 });
    assert.deepEqual(c.incr('k', 1000, 1, true, false, 1400), { current: 3, ttl: 1000 });
  });

  test('forgets the least recently used keys beyond its capacity', () => {
    const c = new Counters(2);
    c.incr('a', 1000, 5, false, false, 0);
    c.incr('b', 1000, 5, false, false, 0);
    c.incr('a', 1000, 5, false, false, 1);
    c.incr('c', 1000, 5, false, false, 2);
    assert.equal(c.read('b', 1000, 3).current, 0);
    assert.equal(c.read('a', 1000, 3).current, 2);
  });
});
