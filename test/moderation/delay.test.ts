import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EventPublisher, StoredEvent } from '../../src/modules/outbox/events.js';
import { enqueueEvent, outboxBacklog } from '../../src/modules/outbox/outbox.repository.js';
import { OutboxRelay } from '../../src/modules/outbox/outbox.relay.js';
import { dialects, openTestDatabase, type TestDatabase } from '../helper.js';

function recorder(): EventPublisher & { events: StoredEvent[] } {
  const events: StoredEvent[] = [];
  return {
    events,
    async publish(event) {
      events.push(event);
      return event.channels.map(() => ({ offset: 0, epoch: '' }));
    },
  };
}

for (const dialect of await dialects()) {
  describe(`alert delay in the outbox (${dialect})`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    test('a row waits for its not_before, later rows pass it, and a relay started afterwards (a restart) publishes it once due', async () => {
      const db = t.database.db;
      const future = Date.now() + 3600_000;
      await db.transaction().execute(async (tx) => {
        await enqueueEvent(tx, { type: 'donation.created', userId: 1, payload: { i: 'delayed' }, notBefore: future });
        await enqueueEvent(tx, { type: 'donation.created', userId: 1, payload: { i: 'now' } });
      });
      const first = recorder();
      const relay = new OutboxRelay(t.database, first);
      assert.equal(await relay.drain(), 1);
      assert.deepEqual(first.events.map((e) => JSON.parse(e.payload).i), ['now']);
      assert.equal((await outboxBacklog(db)).backlog, 0, 'a delayed alert is not backlog');
      assert.equal((await outboxBacklog(db, future)).backlog, 1);

      // The delay is a column of the row: move the clock's meaning by moving the row's time.
      await db.updateTable('outbox').set({ not_before: Date.now() - 1 }).where('published_at', 'is', null).execute();
      const second = recorder();
      const restarted = new OutboxRelay(t.database, second);
      assert.equal(await restarted.drain(), 1);
      assert.deepEqual(second.events.map((e) => JSON.parse(e.payload).i), ['delayed']);
      assert.equal(await restarted.drain(), 0);
    });
  });
}
