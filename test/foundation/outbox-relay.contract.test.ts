import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import type { EventPublisher, StoredEvent } from '../../src/modules/outbox/events.js';
import { enqueueEvent, outboxBacklog } from '../../src/modules/outbox/outbox.repository.js';
import { OutboxRelay } from '../../src/modules/outbox/outbox.relay.js';
import { until } from '../wait.js';
import { ClaimOwner } from '../../src/modules/outbox/claim-owner.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { RealtimeNode } from '../../src/realtime/node.js';
import { eventPublisher } from '../../src/realtime/setup.js';
import { createDatabase, releaseSavepoint, rollbackToSavepoint, savepoint } from '../../src/db/database.js';
import { dialects, openTestDatabase, type TestDatabase } from '../helper.js';

/**
 * The suite runs once with publishers across the network (the relay claims rows before publishing)
 * and, on SQLite, once with in-process publishers (the memory broker: one transaction per round).
 */
let inProcess = false;

/** A publisher that records what it is handed (the relay's only view of the real-time side). */
function recorder(onPublish?: (event: StoredEvent) => Promise<void> | void): EventPublisher & { events: StoredEvent[] } {
  const events: StoredEvent[] = [];
  return {
    inProcess,
    events,
    async publish(event) {
      await onPublish?.(event);
      events.push(event);
      return event.channels.map(() => ({ offset: 0, epoch: '' }));
    },
  };
}

const seq = (events: StoredEvent[]) => events.map((e) => JSON.parse(e.payload).i);

type Mode = 'claims' | 'in-process';
const suites = (await dialects()).flatMap((dialect) => (dialect === 'sqlite' ? (['claims', 'in-process'] as Mode[]) : (['claims'] as Mode[])).map((mode) => ({ dialect, mode })));
for (const { dialect, mode } of suites) {
  describe(`outbox relay on ${dialect}${mode === 'in-process' ? ', in-process publisher' : ''}`, () => {
    let t: TestDatabase;
    before(async () => {
      inProcess = mode === 'in-process';
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    async function write(n: number, userId = 1): Promise<void> {
      await t.database.db.transaction().execute(async (tx) => {
        for (let i = 0; i < n; i++) await enqueueEvent(tx, { type: 'custom_alert.created', userId, payload: { i } });
      });
    }

    async function pending(): Promise<number> {
      return (await t.database.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute()).length;
    }

    test('publishes every row once, in id order, and marks it published', async () => {
      await write(450);
      const p = recorder();
      const relay = new OutboxRelay(t.database, p, { batchSize: 100 });
      assert.equal(await relay.drain(), 450);
      assert.deepEqual(seq(p.events), Array.from({ length: 450 }, (_, i) => i));
      assert.equal(await pending(), 0);
      assert.equal(await relay.drain(), 0);
    });

    test('one row per event: a donation goes to the donation channel and the widget, stored once, typed, payload as written', async () => {
      await t.database.db.transaction().execute((tx) => enqueueEvent(tx, { type: 'donation.created', userId: 7, payload: { id: 1, message: 'é "quoted" \u2028' } }));
      const rows = await t.database.db.selectFrom('outbox').selectAll().where('published_at', 'is', null).execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.type, 'donation.created');
      assert.equal(rows[0]!.user_id, 7);
      const p = recorder();
      await new OutboxRelay(t.database, p).drain();
      assert.equal(p.events.length, 1);
      assert.deepEqual(p.events[0]!.channels, ['$alerts:donation_7', '$widget:alerts_7']);
      assert.equal(p.events[0]!.id, rows[0]!.id);
      // The stored JSON text itself, not a re-encoding of it.
      assert.equal(p.events[0]!.payload, rows[0]!.payload);
    });

    if (dialect === 'sqlite') {
      test('requests still commit durably after the relay wrote (synchronous stays FULL)', async () => {
        await write(3);
        await new OutboxRelay(t.database, recorder()).drain();
        const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(t.database.db);
        assert.equal(rows[0]!.synchronous, 2, 'FULL');
      });
    }

    test('two relays racing publish each row exactly once', async () => {
      await write(300);
      const p = recorder(() => new Promise((r) => setImmediate(r)));
      const a = new OutboxRelay(t.database, p, { batchSize: 25 });
      const b = new OutboxRelay(t.database, p, { batchSize: 25 });
      const counts = await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
      // A relay that finds the rows taken stops; whatever is left, a later round publishes.
      const rest = await a.drain();
      assert.equal(p.events.length, 300);
      assert.equal(new Set(p.events.map((e) => e.id)).size, 300);
      assert.equal(counts.reduce((x, y) => x + y, 0) + rest, 300);
      assert.equal(await pending(), 0);
    });

    test('a failed publish leaves the rest for the next round (at least once, nothing lost)', async () => {
      await write(5);
      let calls = 0;
      const failing = new OutboxRelay(t.database, recorder(() => {
        if (++calls === 3) throw new Error('broker down');
      }));
      await assert.rejects(failing.drain(), /broker down/);
      assert.ok((await pending()) >= 3, 'the failed row and those after it stay pending');
      const p = recorder();
      await new OutboxRelay(t.database, p).drain();
      assert.deepEqual(seq(p.events).slice(-3), [2, 3, 4]);
      assert.equal(await pending(), 0);
    });

    test('a commit wakes the running relay: with an hour-long idle poll, the event still goes out', async () => {
      const p = recorder();
      const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
      await write(1, 40);
      relay.start();
      try {
        // The start-up round publishes what was there; after it, only a wake-up can find more.
        await until(() => p.events.length === 1, 20_000, 'the start-up round');
        await write(1, 41);
        await until(() => p.events.some((e) => e.channels.includes('$widget:alerts_41')), 20_000, 'the committed event to be published');
      } finally {
        await relay.stop();
      }
    });

    test('a commit during a round gets a round of its own (no poll tick needed)', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let first = true;
      const p = recorder(async () => {
        if (first) {
          first = false;
          await gate;
        }
      });
      const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
      await write(1, 42);
      relay.start();
      try {
        await until(() => !first, 20_000, 'the first round to be publishing');
        if (inProcess) {
          // The round holds the connection until its marks are written: the commit queues behind it.
          const written = write(1, 43);
          release();
          await written;
        } else {
          await write(1, 43); // commits while the round is blocked in publish
          release();
        }
        await until(() => p.events.some((e) => e.channels.includes('$widget:alerts_43')), 20_000, 'the event committed mid-round');
      } finally {
        await relay.stop();
      }
    });

    test('rows written by another process are found by the idle poll', async () => {
      const p = recorder();
      const relay = new OutboxRelay(t.database, p, { pollMs: 50 });
      relay.start();
      try {
        // Inserted outside any transaction of ours, as another process would: no commit signal.
        await t.database.db.insertInto('outbox').values({ type: 'custom_alert.created', user_id: 44, channels: '["polled"]', payload: '{}', created_at: Date.now() }).execute();
        await until(() => p.events.some((e) => e.channels.includes('polled')), 20_000, 'the polled row');
      } finally {
        await relay.stop();
      }
    });

    test('a crash between publishing and marking published: the next run publishes again, the broker keeps one publication at the original offset', async () => {
      const db = t.database.db;
      await write(3, 50);
      // The published mark cannot be written, as if the process died right after publishing.
      if (dialect === 'sqlite') {
        await sql`create trigger refuse_mark before update of published_at on outbox begin select raise(abort, 'mark refused'); end`.execute(db);
      } else {
        await sql`create function refuse_mark() returns trigger language plpgsql as $$ begin raise exception 'mark refused'; end $$`.execute(db);
        await sql`create trigger refuse_mark before update of published_at on outbox for each row execute function refuse_mark()`.execute(db);
      }
      const broker = new MemoryBroker();
      const node = new RealtimeNode({ tokenSecret: 'relay-contract', broker });
      const owner = new ClaimOwner('node-a');
      try {
        await assert.rejects(new OutboxRelay(t.database, eventPublisher(node, { inProcess }), { owner }).drain(), /mark refused/);
        const first = await broker.history('$widget:alerts_50');
        assert.deepEqual(first.publications.map((p) => [p.offset, JSON.parse(p.data).i]), [[1, 0], [2, 1], [3, 2]]);
        await sql`drop trigger refuse_mark${dialect === 'postgres' ? sql` on outbox` : sql``}`.execute(db);
        // The same node starts again (a new process): its claims are recovered, the events re-published.
        const restarted = new OutboxRelay(t.database, eventPublisher(node, { inProcess }), { owner: new ClaimOwner('node-a', owner.pid) });
        restarted.start();
        try {
          await until(async () => (await outboxBacklog(db)).backlog === 0, 20_000, 'the events to be marked published');
        } finally {
          await restarted.stop();
        }
        const after = await broker.history('$widget:alerts_50');
        assert.deepEqual(after.publications, first.publications, 'no second publication, no new offset');
        assert.equal(after.position.offset, 3);
      } finally {
        await node.shutdown();
        await broker.close();
      }
    });

    if (dialect === 'sqlite') {
      test('a starting node publishes its own dead claims at once; another node’s claims wait for the timeout', async () => {
        const db = t.database.db;
        await write(1, 51);
        await write(1, 52);
        await write(1, 53);
        const rows = await db.selectFrom('outbox').select(['id', 'user_id']).where('user_id', 'in', [51, 52, 53]).orderBy('id').execute();
        const now = Date.now();
        const claim = (userId: number, by: string, at: number) =>
          db.updateTable('outbox').set({ claimed_by: by, claimed_at: at }).where('id', '=', rows.find((r) => r.user_id === userId)!.id).execute();
        await claim(51, 'node-b/2147483646/deadbeef', now); // our node, a process that is gone
        await claim(52, 'node-c/2147483646/deadbeef', now); // another node, claimed just now
        await claim(53, 'node-c/2147483646/cafecafe', now - 60_000); // another node, past the timeout
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { owner: new ClaimOwner('node-b'), pollMs: 20, claimTimeoutMs: 30_000 });
        relay.start();
        try {
          await until(() => p.events.some((e) => e.channels.includes('$widget:alerts_51')) && p.events.some((e) => e.channels.includes('$widget:alerts_53')), 20_000, 'the dead claims');
          await new Promise((r) => setTimeout(r, 100)); // several more polls
          assert.equal(p.events.some((e) => e.channels.includes('$widget:alerts_52')), false, 'a live claim of another node is left to it');
        } finally {
          await relay.stop();
        }
        await db.updateTable('outbox').set({ published_at: Date.now() }).where('id', '=', rows[1]!.id).execute();
      });
    }

    if (mode === 'in-process') {
      test("a commit's own events are published from the commit: before its transaction's promise resolves, no round needed", async () => {
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
        await relay.start();
        try {
          await write(2, 60);
          // A round would have to wait for the connection the committing transaction holds, and read.
          assert.deepEqual(p.events.filter((e) => e.channels.includes('$widget:alerts_60')).map((e) => JSON.parse(e.payload).i), [0, 1]);
        } finally {
          await relay.stop();
        }
        assert.equal(await pending(), 0, 'stop marks what the commits published');
      });

      test("a commit it published from starts no round: its marks wait for the poll or stop", async () => {
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
        await relay.start();
        try {
          await write(1, 64);
          await write(1, 64);
          assert.equal(p.events.filter((e) => e.channels.includes('$widget:alerts_64')).length, 2);
          // A round started by either commit would have run to its end by now (no I/O to wait for).
          for (let i = 0; i < 3; i++) await new Promise(setImmediate);
          assert.equal(await pending(), 2, 'published, not marked yet');
        } finally {
          await relay.stop();
        }
        assert.equal(await pending(), 0, 'stop marks them');
      });

      test('marks waiting for a whole batch start a round without the poll', async () => {
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000, batchSize: 3 });
        await relay.start();
        try {
          for (let i = 0; i < 3; i++) await write(1, 65);
          await until(async () => (await pending()) === 0, 20_000, 'the batch marked');
        } finally {
          await relay.stop();
        }
      });

      test("rows another process wrote first go out first: a commit's rows wait for the round that reads them in id order", async () => {
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
        await relay.start();
        const other = createDatabase({ dialect: 'sqlite', file: t.env.DATABASE_URL.slice('sqlite:'.length) });
        try {
          // Another connection, as another process (the CLI) would write: no commit of ours.
          await other.db.insertInto('outbox').values({ type: 'custom_alert.created', user_id: 61, channels: '["other"]', payload: '{"i":"other"}', created_at: Date.now() }).execute();
          await write(1, 61);
          await until(() => p.events.some((e) => e.channels.includes('$widget:alerts_61')), 20_000, 'our event');
          const ours = p.events.filter((e) => e.channels.includes('other') || e.channels.includes('$widget:alerts_61'));
          assert.deepEqual(ours.map((e) => e.channels[0]), ['other', '$widget:alerts_61']);
          assert.ok(ours[0]!.id < ours[1]!.id);
        } finally {
          await other.close();
          await relay.stop();
        }
        assert.equal(await pending(), 0);
      });

      test('an event rolled back to a savepoint is never published; what the transaction kept is, once', async () => {
        const p = recorder();
        const relay = new OutboxRelay(t.database, p, { pollMs: 3600_000 });
        await relay.start();
        try {
          await t.database.db.transaction().execute(async (tx) => {
            await enqueueEvent(tx, { type: 'custom_alert.created', userId: 62, payload: { i: 'kept' } });
            await savepoint(tx, 'job');
            await enqueueEvent(tx, { type: 'custom_alert.created', userId: 62, payload: { i: 'rolled back' } });
            await rollbackToSavepoint(tx, 'job');
            await releaseSavepoint(tx, 'job');
          });
          await write(1, 62);
          await relay.drain();
          const rows = await t.database.db.selectFrom('outbox').select(['id', 'payload']).where('user_id', '=', 62).orderBy('id').execute();
          const published = p.events.filter((e) => e.channels.includes('$widget:alerts_62'));
          assert.deepEqual(published.map((e) => [e.id, e.payload]), rows.map((r) => [r.id, r.payload]));
          assert.deepEqual(published.map((e) => JSON.parse(e.payload).i), ['kept', 0]);
        } finally {
          await relay.stop();
        }
      });

      test("a commit's published events are marked in a transaction of their own, before the round publishes what it reads", async () => {
        // A row another process writes right after the commit (inside the publication of ours): the
        // next round reads it; its mark is refused, as if the process died before that commit.
        await sql`create trigger refuse_mark_71 before update of published_at on outbox when new.user_id = 71 begin select raise(abort, 'mark refused'); end`.execute(t.database.db);
        const other = new SQLite(t.env.DATABASE_URL.slice('sqlite:'.length));
        let inserted = false;
        const p = recorder((event) => {
          if (inserted || !event.channels.includes('$widget:alerts_70')) return;
          inserted = true;
          other.prepare(`insert into outbox (type, user_id, channels, payload, created_at) values ('custom_alert.created', 71, '["$widget:alerts_71"]', '{"i":"read"}', ?)`).run(Date.now());
        });
        // A 1 ms poll: the round after the commit reads as well as marks.
        const relay = new OutboxRelay(t.database, p, { pollMs: 1 });
        await relay.start();
        const marked = async (userId: number) => (await t.database.db.selectFrom('outbox').select('published_at').where('user_id', '=', userId).executeTakeFirstOrThrow()).published_at !== null;
        try {
          await write(1, 70);
          await until(() => p.events.some((e) => e.channels.includes('$widget:alerts_71')), 20_000, 'the row read by the round');
          await until(() => marked(70), 20_000, 'the mark of the commit\'s event');
          assert.equal(await marked(71), false);
        } finally {
          await sql`drop trigger refuse_mark_71`.execute(t.database.db);
          other.close();
          await until(() => marked(71), 20_000, 'the read row marked once the trigger is gone');
          await relay.stop();
        }
      });

      test('two started relays on one database: one takes the commits, each event goes out once', async () => {
        const p = recorder();
        const a = new OutboxRelay(t.database, p, { pollMs: 20 });
        const b = new OutboxRelay(t.database, p, { pollMs: 20 });
        await a.start();
        await b.start();
        try {
          for (let i = 0; i < 5; i++) await write(1, 63);
          await until(() => p.events.filter((e) => e.channels.includes('$widget:alerts_63')).length >= 5, 20_000, 'the events');
          await new Promise((r) => setTimeout(r, 100)); // several polls of both
          assert.equal(p.events.filter((e) => e.channels.includes('$widget:alerts_63')).length, 5);
        } finally {
          await a.stop();
          await b.stop();
        }
      });
    }

    test('onPublished reports each event with its creation and publication times; the backlog empties', async () => {
      await write(2, 45);
      const relay = new OutboxRelay(t.database, recorder());
      assert.equal((await outboxBacklog(t.database.db)).backlog, 2);
      const seen: { id: number; createdAt: number; publishedAt: number }[] = [];
      relay.onPublished((event, createdAt, publishedAt) => seen.push({ id: event.id, createdAt, publishedAt }));
      await relay.drain();
      assert.equal(seen.length, 2);
      for (const s of seen) assert.ok(s.publishedAt >= s.createdAt);
      assert.equal((await outboxBacklog(t.database.db)).backlog, 0);
    });
  });
}
