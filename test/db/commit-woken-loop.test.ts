import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { CommitWokenLoop } from '../../src/db/commit-woken-loop.js';
import type { Database } from '../../src/db/database.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import type { EventPublisher } from '../../src/modules/outbox/events.js';
import { OutboxRelay } from '../../src/modules/outbox/outbox.relay.js';
import { allEvents } from '../../src/modules/outbox/outbox.repository.js';
import { makeUser, openTestDatabase } from '../helper.js';
import { until } from '../wait.js';

/** A database whose commits the test makes: only `onCommit` is used by the loop. */
function fakeDatabase(): { database: Database; commit(): void } {
  const listeners = new Set<() => void>();
  const database = { onCommit: (l: () => void) => (listeners.add(l), () => listeners.delete(l)) } as unknown as Database;
  return { database, commit: () => listeners.forEach((l) => l()) };
}

test("a commit starts a round in the same turn of the event loop, ahead of timers (no poll tick, no 1 ms timer)", async () => {
  const { database, commit } = fakeDatabase();
  const order: string[] = [];
  let rounds = 0;
  const loop = new CommitWokenLoop(database, { pollMs: 60_000, round: async () => void (rounds++ > 0 && order.push('round')), onError: () => {} });
  await loop.start();
  try {
    // From an I/O callback (as a request's commit is), immediates run before timers of this turn.
    await new Promise<void>((resolve) =>
      fs.readFile(fileURLToPath(import.meta.url), () => {
        setTimeout(() => {
          order.push('timer');
          resolve();
        }, 0);
        commit();
      }),
    );
    assert.deepEqual(order, ['round', 'timer']);
  } finally {
    await loop.stop();
  }
});

test('a commit during a round means exactly one more round right after it', async () => {
  const { database, commit } = fakeDatabase();
  let rounds = 0;
  let release!: () => void;
  const loop = new CommitWokenLoop(database, {
    pollMs: 60_000,
    round: async () => {
      rounds++;
      if (rounds === 2) await new Promise<void>((r) => (release = r));
    },
    onError: () => {},
  });
  await loop.start();
  try {
    commit();
    while (!release) await new Promise((r) => setImmediate(r));
    commit();
    commit();
    release();
    while (rounds < 3) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(rounds, 3, 'two commits during the round: one round after it');
  } finally {
    await loop.stop();
  }
});

test("a commit's events are published in the committing turn: what the publisher hands on with setImmediate runs before the next turn's timers", async () => {
  const t = await openTestDatabase('sqlite');
  const order: string[] = [];
  const publisher: EventPublisher = {
    async publish(event) {
      order.push(`published ${event.type}`);
      // The hub's fan-out slices are setImmediate callbacks.
      setImmediate(() => order.push('fan-out'));
      return event.channels.map(() => ({ offset: 0, epoch: '' }));
    },
  };
  const relay = new OutboxRelay(t.database, publisher, { pollMs: 60_000 });
  try {
    const user = await makeUser(t.database.db);
    await relay.start();
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    // A request's commit happens in an I/O callback; the next request's commit would come in a later turn (here: a timer).
    fs.readFile(fileURLToPath(import.meta.url), () => {
      setTimeout(() => {
        order.push('next turn');
        done();
      }, 0);
      void createDonation(t.database.db, { userId: user.id, amount: '1', currency: 'USD' });
    });
    await finished;
    assert.deepEqual(order.slice(0, 3), ['published donation.created', 'fan-out', 'next turn']);
  } finally {
    await relay.stop();
    await t.drop();
  }
});

test("a round's events are flushed to the sockets before the round writes its published marks", async () => {
  const t = await openTestDatabase('sqlite');
  const reader = new SQLite(t.env.DATABASE_URL.slice('sqlite:'.length), { readonly: true });
  const seen: string[] = [];
  const publisher: EventPublisher = {
    async publish(event) {
      seen.push(`published ${event.id}`);
      return event.channels.map(() => ({ offset: 0, epoch: '' }));
    },
    flush() {
      // Another connection, read synchronously: what the database holds at the moment of the flush.
      const marked = reader.prepare('select count(*) as n from outbox where published_at is not null').get() as { n: number };
      seen.push(`flush, ${marked.n} marked`);
    },
  };
  const relay = new OutboxRelay(t.database, publisher, { pollMs: 60_000 });
  try {
    const user = await makeUser(t.database.db);
    await relay.start();
    await createDonation(t.database.db, { userId: user.id, amount: '1', currency: 'USD' });
    await until(async () => (await allEvents(t.database.db)).every((e) => e.publishedAt !== null), 20_000, 'the event marked published');
    assert.deepEqual(seen, ['published 1', 'flush, 0 marked']);
  } finally {
    await relay.stop();
    reader.close();
    await t.drop();
  }
});

test('failing rounds back off (ten polls, doubling, at most maxRetryMs) and say so; a success after them is reported once', async () => {
  const { database } = fakeDatabase();
  let failing = 4;
  const errors: [number, number][] = [];
  const recovered: number[] = [];
  const loop = new CommitWokenLoop(database, {
    pollMs: 5,
    maxRetryMs: 200,
    round: async () => {
      if (failing > 0) {
        failing--;
        throw new Error('broker does not answer');
      }
    },
    onError: (_err, failures, retryMs) => errors.push([failures, retryMs]),
    onRecovered: (failures) => recovered.push(failures),
  });
  await loop.start();
  try {
    await until(() => recovered.length > 0, 10_000, 'a round that succeeds');
    assert.deepEqual(errors, [[1, 50], [2, 100], [3, 200], [4, 200]]);
    assert.deepEqual(recovered, [4]);
  } finally {
    await loop.stop();
  }
});
