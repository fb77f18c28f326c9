import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { enqueueEvent } from '../../src/modules/outbox/outbox.repository.js';
import { OutboxRelay } from '../../src/modules/outbox/outbox.relay.js';
import { dialects, openTestDatabase, type TestDatabase } from '../helper.js';

for (const dialect of await dialects()) {
  describe(`outbox relay on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    async function write(n: number, channel = 'c'): Promise<void> {
      await t.database.db.transaction().execute(async (tx) => {
        for (let i = 0; i < n; i++) await enqueueEvent(tx, channel, { i });
      });
    }

    async function pending(): Promise<number> {
      return (await t.database.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute()).length;
    }

    test('publishes every row once, in id order, and marks it published', async () => {
      await write(450);
      const seen: number[] = [];
      const relay = new OutboxRelay(t.database, async (_channel, payload) => {
        seen.push(JSON.parse(payload).i);
      }, { batchSize: 100 });
      assert.equal(await relay.drain(), 450);
      assert.deepEqual(seen, Array.from({ length: 450 }, (_, i) => i));
      assert.equal(await pending(), 0);
      assert.equal(await relay.drain(), 0);
    });

    if (dialect === 'sqlite') {
      test('requests still commit durably after the relay wrote (synchronous stays FULL)', async () => {
        await write(3);
        await new OutboxRelay(t.database, async () => {}).drain();
        const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(t.database.db);
        assert.equal(rows[0]!.synchronous, 2, 'FULL');
      });
    }

    test('two relays racing publish each row exactly once', async () => {
      await write(300);
      const seen: number[] = [];
      const publish = async (_c: string, payload: string) => {
        await new Promise((r) => setImmediate(r));
        seen.push(JSON.parse(payload).i);
      };
      const a = new OutboxRelay(t.database, publish, { batchSize: 25 });
      const b = new OutboxRelay(t.database, publish, { batchSize: 25 });
      const counts = await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
      // A relay that finds the rows taken stops; whatever is left, a later round publishes.
      await a.drain();
      assert.equal(seen.length, 300);
      assert.equal(new Set(seen).size, 300);
      assert.ok(counts.reduce((x, y) => x + y, 0) <= 300);
      assert.equal(await pending(), 0);
    });

    test('a failed publish leaves the rest for the next round (at least once, nothing lost)', async () => {
      await write(5);
      let calls = 0;
      const failing = new OutboxRelay(t.database, async () => {
        calls++;
        if (calls === 3) throw new Error('broker down');
      });
      await assert.rejects(failing.drain(), /broker down/);
      assert.ok((await pending()) >= 3, 'the failed row and those after it stay pending');
      const seen: number[] = [];
      await new OutboxRelay(t.database, async (_c, p) => {
        seen.push(JSON.parse(p).i);
      }).drain();
      assert.deepEqual(seen.slice(-3), [2, 3, 4]);
      assert.equal(await pending(), 0);
    });

    test('the running relay publishes a commit at once and rows of other processes on its poll', async () => {
      const seen: string[] = [];
      const relay = new OutboxRelay(t.database, async (channel) => {
        seen.push(channel);
      }, { pollMs: 50 });
      relay.start();
      try {
        await write(1, 'live');
        const deadline = Date.now() + 2000;
        while (!seen.includes('live') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        assert.ok(seen.includes('live'));
        // A row inserted without a transaction of ours (as another process would) is found by polling.
        await t.database.db.insertInto('outbox').values({ channel: 'polled', payload: '{}', created_at: Date.now() }).execute();
        const until = Date.now() + 2000;
        while (!seen.includes('polled') && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
        assert.ok(seen.includes('polled'));
      } finally {
        await relay.stop();
      }
    });
  });
}
