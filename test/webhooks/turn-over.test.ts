import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDatabase } from '../../src/db/database.js';
import { ThreadWriteLock } from '../../src/db/thread-write-lock.js';
import { ClaimOwner } from '../../src/modules/outbox/claim-owner.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/webhooks.dispatcher.js';
import { receivers } from './receiver.js';
import { useWebhookFixture } from './fixture.js';

/**
 * SQLite: a dispatcher transaction with several groups of writes commits what it has and hands the
 * threads' write lock to a request that waits for it, then goes on in a new turn — and loses,
 * repeats or reorders nothing. The dispatcher runs here on a second connection of this thread (as in
 * test/db/thread-write-lock.test.ts); the app's own dispatcher thread is stopped first.
 */
describe('webhook dispatcher: a turn of the write lock is handed over to a waiting request', () => {
  const f = useWebhookFixture();
  const receiver = receivers();

  test('a fan-out of several groups lets the request in between them; every delivery is written once, in order', async () => {
    const r = await receiver();
    const subs = [];
    for (let i = 0; i < 10; i++) subs.push(await f.subscribe(`${r.url}/${i}`, ['donation.created']));
    await f.t.app.ctx.webhooks.stop();
    const donations = [];
    for (let i = 0; i < 6; i++) donations.push(await f.donate(i + 1));

    const appLock = f.t.database.threadLock!;
    const other = createDatabase(f.t.database.config, { threadLock: { buffer: appLock.buffer, holder: 2 } });
    const dispatcher = new WebhookDispatcher(other, { config: f.t.app.ctx.config.webhooks, encryptionKey: f.t.app.ctx.secrets.encryptionKey, owner: new ClaimOwner('turn-over-test') });
    // The request: once the dispatcher holds the lock, wait for it as the app's side does (first).
    const request = new ThreadWriteLock(appLock.buffer, 1, true);
    let seenMidway: { deliveries: number; read: number } | null = null;
    let waited: Promise<void> | null = null;
    other.onQuery(() => {
      if (waited) return;
      if (request.tryAcquire()) return request.release();
      waited = request.acquire().then(async () => {
        try {
          const db = f.t.database.db;
          const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
          const read = await db.selectFrom('outbox').select('id').where('type', '=', 'donation.created').where('webhooks_at', 'is not', null).execute();
          seenMidway = { deliveries: deliveries.length, read: read.length };
        } finally {
          request.release();
        }
      });
    });
    const turnedOverBefore = appLock.turnsOf(2).turnedOver;
    try {
      assert.equal(await dispatcher.fanOut(), 6);
      await waited;
    } finally {
      await other.close();
    }

    assert.ok(appLock.turnsOf(2).turnedOver > turnedOverBefore, 'the dispatcher turned the lock over');
    // The request got in after the first group (two events, ten deliveries each) was committed, before the rest.
    assert.ok(seenMidway, 'the request got the lock');
    const midway = seenMidway as { deliveries: number; read: number };
    assert.ok(midway.deliveries > 0 && midway.deliveries < 60, `part of the fan-out committed when the request went: ${midway.deliveries}`);
    assert.equal(midway.deliveries, midway.read * 10, 'each committed group with its events marked read');

    const db = f.t.database.db;
    const unread = await db.selectFrom('outbox').select('id').where('type', '=', 'donation.created').where('webhooks_at', 'is', null).execute();
    assert.equal(unread.length, 0);
    for (const sub of subs) {
      const rows = await db.selectFrom('webhook_deliveries').select(['id', 'message_id']).where('subscription_id', '=', sub.id).orderBy('id').execute();
      const amounts = rows.map((row) => row.message_id);
      assert.equal(rows.length, 6, 'one delivery per donation');
      assert.equal(new Set(amounts).size, 6, 'none twice');
      const eventIds = amounts.map((m) => Number(m.slice('msg_'.length)));
      assert.deepEqual(eventIds, [...eventIds].sort((a, b) => a - b), 'in event order');
    }
  });
});
