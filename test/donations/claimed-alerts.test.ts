import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { donationChannel } from '../../src/modules/outbox/channels.js';
import type { EventPublisher, StoredEvent } from '../../src/modules/outbox/events.js';
import { enqueueEvent } from '../../src/modules/outbox/outbox.repository.js';
import { OutboxRelay } from '../../src/modules/outbox/outbox.relay.js';
import { ClaimOwner } from '../../src/modules/outbox/claim-owner.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { until } from '../wait.js';

/**
 * PostgreSQL, issue 16: a donation's alert is claimed by the statement that writes it for the relay
 * of this process, which publishes it as the statement returns — no relay round reads it back — and
 * marks it with a later round. What must hold: nothing goes out before its COMMIT has returned; an
 * alert never passes an older one still waiting for a round; a publication that fails is retried
 * (the claim keeps other relays off meanwhile); a dead claim is taken over.
 */
const postgres = (await dialects()).includes('postgres');

/** An in-process publisher (as the memory broker is) recording what it was handed, in order. */
function recorder(onPublish?: (event: StoredEvent) => Promise<void> | void): EventPublisher & { events: StoredEvent[] } {
  const events: StoredEvent[] = [];
  return {
    inProcess: true,
    events,
    async publish(event) {
      await onPublish?.(event);
      events.push(event);
      return event.channels.map(() => ({ offset: 0, epoch: '' }));
    },
  };
}

const donationIdOf = (event: StoredEvent): number => JSON.parse(event.payload).id;

describe('donation alerts published from their commit (postgres)', { skip: !postgres && 'PostgreSQL is not reachable' }, () => {
  let t: TestDatabase;
  /** Another connection: what it sees is committed. */
  let other: pg.Client;
  before(async () => {
    t = await openTestDatabase('postgres');
    other = new pg.Client({ connectionString: t.env.DATABASE_URL });
    await other.connect();
  });
  after(async () => {
    await other.end();
    await t.drop();
  });

  /** A new streamer, and a started relay publishing to a recorder (no poll within a test unless `pollMs` says). */
  async function started(onPublish?: (event: StoredEvent) => Promise<void> | void, pollMs = 3600_000) {
    const db = t.database.db;
    const streamer = await makeUser(db, { currency: 'USD' });
    const p = recorder(onPublish);
    const relay = new OutboxRelay(t.database, p, { pollMs });
    await relay.start();
    return { db, streamer, p, relay };
  }

  const outboxRow = async (donationId: number) =>
    (await t.database.db.selectFrom('outbox').select(['id', 'claimed_by', 'published_at']).where('payload', 'like', `{"id":${donationId},%`).executeTakeFirstOrThrow());

  test('published as the write returns, without a round, only once another connection sees the donation; marked by the next round', async () => {
    const seenCommitted: boolean[] = [];
    // No poll within the test: only a commit can start a round.
    const { db, streamer, p, relay } = await started(async (event) => {
      const { rows } = await other.query('select count(*)::int as n from donations where id = $1', [donationIdOf(event)]);
      seenCommitted.push(rows[0].n === 1);
    });
    try {
      const donations = await Promise.all([1, 2, 3].map((i) => createDonation(db, { userId: streamer.id, amount: `${i}`, currency: 'USD', message: `m${i}` })));
      await until(() => p.events.length === 3, 5000, 'three alerts');
      assert.deepEqual(p.events.map(donationIdOf), donations.map((d) => d.id).sort((a, b) => a - b), 'in id order');
      assert.deepEqual(seenCommitted, [true, true, true], 'each alert went out after its donation was committed');
      assert.deepEqual(p.events[0]!.channels, [donationChannel(streamer.id), `$widget:alerts_${streamer.id}`]);
      for (const d of donations) {
        const row = await outboxRow(d.id);
        assert.equal(row.claimed_by, relay.owner.id, 'claimed by the statement for this relay');
        assert.equal(row.published_at, null, 'marked by a later round, not by one per commit');
      }
      await relay.drain();
      for (const d of donations) assert.notEqual((await outboxRow(d.id)).published_at, null, 'the round marks them');
      assert.equal(p.events.length, 3, 'the round published nothing again');
    } finally {
      await relay.stop();
    }
  });

  test('an alert never passes an older event still waiting for a round: nothing is claimed, a round publishes both in order', async () => {
    const { db, streamer, p, relay } = await started();
    try {
      // Another process's event for the same channel, not published yet (its commit woke no relay here).
      await other.query(`insert into outbox (type, user_id, channels, payload, created_at) values ('custom_alert.created', $1, $2, '{"older":true}', $3)`, [
        streamer.id,
        JSON.stringify([donationChannel(streamer.id)]),
        Date.now(),
      ]);
      const donation = await createDonation(db, { userId: streamer.id, amount: '5', currency: 'USD' });
      await until(() => p.events.length === 2, 5000, 'both events');
      assert.deepEqual(JSON.parse(p.events[0]!.payload), { older: true }, 'the older event first');
      assert.equal(donationIdOf(p.events[1]!), donation.id);
      assert.equal((await outboxRow(donation.id)).claimed_by, null, 'left unclaimed, for the round');
    } finally {
      await relay.stop();
    }
  });

  test('a delayed alert is not claimed: the poll publishes it when due', async () => {
    const { db, streamer, p, relay } = await started(undefined, 50);
    try {
      await saveModerationSettings(db, streamer.id, { ...DEFAULT_SETTINGS, alertDelaySeconds: 1 });
      const donation = await createDonation(db, { userId: streamer.id, amount: '5', currency: 'USD' });
      assert.equal((await outboxRow(donation.id)).claimed_by, null);
      await until(() => p.events.length === 1, 10_000, 'the delayed alert');
      assert.equal(donationIdOf(p.events[0]!), donation.id);
    } finally {
      await relay.stop();
    }
  });

  test('a publication that fails is retried by the next round, once, before what comes after it', async () => {
    let failing = true;
    const { db, streamer, p, relay } = await started(() => {
      if (failing) throw new Error('broker down');
    });
    try {
      const first = await createDonation(db, { userId: streamer.id, amount: '1', currency: 'USD' });
      // The failure kicked a round, which failed too (still down) and backs off; nothing went out.
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(p.events.length, 0);
      assert.equal((await outboxRow(first.id)).claimed_by, relay.owner.id, 'still claimed: no other relay takes it');
      failing = false;
      const second = await createDonation(db, { userId: streamer.id, amount: '2', currency: 'USD' });
      await relay.drain();
      await until(() => p.events.length >= 2, 5000, 'both alerts');
      assert.deepEqual(p.events.map(donationIdOf), [first.id, second.id], 'the failed one first, each once');
      // The round the failure kicked may still be writing the marks: stop waits for it.
      await relay.stop();
      assert.equal(p.events.length, 2);
      assert.notEqual((await outboxRow(first.id)).published_at, null);
      assert.notEqual((await outboxRow(second.id)).published_at, null);
    } finally {
      await relay.stop();
    }
  });

  test("a live claim of another relay is left to it; a dead one is taken over", async () => {
    const db = t.database.db;
    const streamer = await makeUser(db, { currency: 'USD' });
    const write = (i: number) => db.transaction().execute((tx) => enqueueEvent(tx, { type: 'custom_alert.created', userId: streamer.id, payload: { i } }));
    await write(1);
    await write(2);
    const rows = await db.selectFrom('outbox').select('id').where('user_id', '=', streamer.id).orderBy('id').execute();
    const now = Date.now();
    await db.updateTable('outbox').set({ claimed_by: 'node-x/2147483646/cafecafe', claimed_at: now }).where('id', '=', rows[0]!.id).execute();
    await db.updateTable('outbox').set({ claimed_by: 'node-x/2147483646/deadbeef', claimed_at: now - 60_000 }).where('id', '=', rows[1]!.id).execute();
    const p = recorder();
    const relay = new OutboxRelay(t.database, p, { owner: new ClaimOwner('node-y'), pollMs: 3600_000, claimTimeoutMs: 30_000 });
    await relay.start();
    try {
      await relay.drain();
      assert.deepEqual(p.events.map((e) => JSON.parse(e.payload).i), [2], 'only the claim past its timeout');
    } finally {
      await relay.stop();
      await db.updateTable('outbox').set({ published_at: Date.now() }).where('id', '=', rows[0]!.id).execute();
    }
  });

  test('a batch whose write fails publishes and claims nothing of it; the rest of the batch goes out', async () => {
    const { db, streamer, p, relay } = await started();
    try {
      // A message the column cannot hold (NUL): the batch's statement fails, each is written alone, the culprit fails.
      const results = await Promise.allSettled([
        createDonation(db, { userId: streamer.id, amount: '1', currency: 'USD', message: 'fine' }),
        createDonation(db, { userId: streamer.id, amount: '2', currency: 'USD', message: 'bad \u0000 byte' }),
        createDonation(db, { userId: streamer.id, amount: '3', currency: 'USD', message: 'fine too' }),
      ]);
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      await until(() => p.events.length === 2, 5000, 'two alerts');
      const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : []));
      assert.deepEqual(p.events.map(donationIdOf), ok);
      const stored = await db.selectFrom('outbox').select('id').where('user_id', '=', streamer.id).execute();
      assert.equal(stored.length, 2, 'no event for the failed donation');
    } finally {
      await relay.stop();
    }
  });
});
