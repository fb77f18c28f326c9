import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import type { Broker, Publication, PublishOptions } from '../../src/realtime/broker.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { RedisBroker } from '../../src/realtime/broker-redis.js';
import { cleanRedis, redisOrSkip, uniquePrefix } from './helpers.js';
import { ipcCluster } from '../cluster/ipc-pair.js';
import { sleep, until } from '../wait.js';

const H: PublishOptions = { historySize: 10, historyTtlMs: 60_000, historyMetaTtlMs: 0 };

/** The one contract every broker meets (architecture.md convention 3): run against memory and Redis. */
function contract(name: string, make: () => Promise<{ broker: Broker; cleanup(): Promise<void> } | null>): void {
  describe(`broker contract: ${name}`, async () => {
    const made = await make();
    const skip = made === null ? 'Redis unreachable (set CI to make this fail)' : false;
    const broker = made?.broker as Broker;
    const got: { channel: string; pub: Publication }[] = [];
    broker?.setHandler((channel, pub) => got.push({ channel, pub }));
    after(async () => {
      await made?.broker.close();
      await made?.cleanup();
    });
    let n = 0;
    const ch = (): string => `$alerts:donation_${name}_${++n}`;

    test('offsets increase from 1 in one epoch; subscribers get the payload verbatim', { skip }, async () => {
      const c = ch();
      await broker.subscribe(c);
      const payload = JSON.stringify({ name: 'Zoë: "hi"\n', amount: 1.5, nested: { a: [1, 2] } });
      const p1 = await broker.publish(c, payload, H);
      const p2 = await broker.publish(c, '{"x":2}', H);
      assert.equal(p1.offset, 1);
      assert.equal(p2.offset, 2);
      assert.equal(p1.epoch, p2.epoch);
      assert.ok(p1.epoch.length > 0);
      await until(() => got.filter((g) => g.channel === c).length === 2, 20_000, 'deliveries');
      const mine = got.filter((g) => g.channel === c).map((g) => g.pub);
      assert.deepEqual(mine, [
        { offset: 1, epoch: p1.epoch, data: payload },
        { offset: 2, epoch: p1.epoch, data: '{"x":2}' },
      ]);
    });

    test('no delivery before subscribe or after unsubscribe', { skip }, async () => {
      const c = ch();
      await broker.publish(c, '1', H);
      await broker.subscribe(c);
      await broker.publish(c, '2', H);
      await broker.unsubscribe(c);
      await broker.publish(c, '3', H);
      await sleep(100);
      assert.deepEqual(got.filter((g) => g.channel === c).map((g) => g.pub.data), ['2']);
    });

    test('a history read before the first publication fixes the epoch the publication uses', { skip }, async () => {
      const c = ch();
      const h = await broker.history(c, { limit: 0 });
      assert.equal(h.position.offset, 0);
      assert.ok(h.position.epoch);
      const p = await broker.publish(c, '1', H);
      assert.deepEqual(p, { offset: 1, epoch: h.position.epoch });
    });

    test('history: oldest first, since, limit, limit 0, bounded by size', { skip }, async () => {
      const c = ch();
      for (let i = 1; i <= 5; i++) await broker.publish(c, `{"i":${i}}`, { ...H, historySize: 3 });
      const all = await broker.history(c);
      assert.equal(all.position.offset, 5);
      assert.deepEqual(all.publications.map((p) => p.offset), [3, 4, 5]);
      assert.deepEqual(all.publications.map((p) => p.data), ['{"i":3}', '{"i":4}', '{"i":5}']);
      assert.ok(all.publications.every((p) => p.epoch === all.position.epoch));
      assert.deepEqual((await broker.history(c, { since: { offset: 3 } })).publications.map((p) => p.offset), [4, 5]);
      assert.deepEqual((await broker.history(c, { since: { offset: 5 } })).publications, []);
      assert.deepEqual((await broker.history(c, { limit: 2 })).publications.map((p) => p.offset), [3, 4]);
      const top = await broker.history(c, { limit: 0 });
      assert.deepEqual(top, { publications: [], position: all.position });
    });

    test('history expires after its TTL; offset and epoch stay', { skip }, async () => {
      const c = ch();
      const p = await broker.publish(c, '1', { ...H, historyTtlMs: 150 });
      await sleep(300);
      const h = await broker.history(c);
      assert.deepEqual(h.publications, []);
      assert.deepEqual(h.position, p);
      assert.deepEqual(await broker.publish(c, '2', { ...H, historyTtlMs: 150 }), { offset: 2, epoch: p.epoch });
    });

    test('meta TTL: once it expires the stream restarts in a new epoch', { skip }, async () => {
      const c = ch();
      const opts = { historySize: 10, historyTtlMs: 100, historyMetaTtlMs: 200 };
      const p = await broker.publish(c, '1', opts);
      await sleep(350);
      const q = await broker.publish(c, '2', opts);
      assert.equal(q.offset, 1);
      assert.notEqual(q.epoch, p.epoch);
    });

    test('removeHistory empties history but keeps the position', { skip }, async () => {
      const c = ch();
      await broker.publish(c, '1', H);
      await broker.removeHistory(c);
      const h = await broker.history(c);
      assert.deepEqual(h.publications, []);
      assert.equal(h.position.offset, 1);
    });

    test('historySize 0: delivered with no offset and no history', { skip }, async () => {
      const c = `public_${name}_${++n}`;
      await broker.subscribe(c);
      const p = await broker.publish(c, '{"n":1}', { historySize: 0, historyTtlMs: 0, historyMetaTtlMs: 0 });
      assert.equal(p.offset, 0);
      await until(() => got.some((g) => g.channel === c), 20_000, 'delivery');
      assert.equal(got.find((g) => g.channel === c)!.pub.offset, 0);
      assert.deepEqual((await broker.history(c)).publications, []);
    });

    test('a key publishes once: the same key again returns the first position and delivers nothing', { skip }, async () => {
      const c = ch();
      await broker.subscribe(c);
      const first = await broker.publish(c, '{"event":7}', H, '7@1000');
      const other = await broker.publish(c, '{"event":8}', H, '8@1000');
      // A relay that crashed after publishing event 7 publishes it again after the restart.
      const again = await broker.publish(c, '{"event":7}', H, '7@1000');
      const next = await broker.publish(c, '{"event":9}', H, '9@1000');
      assert.deepEqual(again, first);
      assert.deepEqual([first.offset, other.offset, next.offset], [1, 2, 3]);
      await until(() => got.filter((g) => g.channel === c).length >= 3, 20_000, 'deliveries');
      await sleep(50);
      assert.deepEqual(got.filter((g) => g.channel === c).map((g) => [g.pub.offset, g.pub.data]), [[1, '{"event":7}'], [2, '{"event":8}'], [3, '{"event":9}']]);
      assert.deepEqual((await broker.history(c)).publications.map((p) => p.data), ['{"event":7}', '{"event":8}', '{"event":9}']);
      // Keys are per channel: the same event on another channel is its own publication there.
      assert.equal((await broker.publish(ch(), '{"event":7}', H, '7@1000')).offset, 1);
    });
  });
}

contract('memory', async () => ({ broker: new MemoryBroker(), cleanup: async () => {} }));

// A worker of `serve --workers N` without Redis: its broker asks the primary's (src/cluster/).
contract('ipc (a worker through its primary)', async () => {
  const cluster = ipcCluster();
  return { broker: cluster.worker(1), cleanup: async () => cluster.close() };
});

contract('redis', async () => {
  const admin: Redis | null = await redisOrSkip();
  if (!admin) return null;
  const prefix = uniquePrefix('contract');
  return {
    broker: new RedisBroker({ prefix }),
    cleanup: async () => {
      await cleanRedis(admin, prefix);
      admin.disconnect();
    },
  };
});
