import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { describe, test } from 'node:test';
import { deletePublishedBefore } from '../../src/modules/outbox/outbox.repository.js';
import { until } from '../wait.js';
import { receivers } from './receiver.js';
import { useWebhookFixture } from './fixture.js';
import { dialects, testConfig } from '../helper.js';

/**
 * The dispatcher's thread (dispatcher-thread.ts): none without a subscription; the first one
 * starts it; it delivers only what happened from the subscription on; the outbox is pruned of rows
 * it never read while no subscription is kept, and not while one is.
 */
describe('webhook dispatcher thread', () => {
  const f = useWebhookFixture();
  const receiver = receivers();
  const db = () => f.t.database.db;
  const outboxRow = (id: number) => db().selectFrom('outbox').select(['id', 'webhooks_at', 'published_at']).where('id', '=', id).executeTakeFirst();

  test('no thread and no fan-out without a subscription; such rows are pruned after their retention all the same', async () => {
    assert.equal(f.t.app.ctx.webhooks.running, false);
    await f.donate(1);
    const row = await until(async () => {
      const rows = await db().selectFrom('outbox').select(['id', 'published_at', 'webhooks_at']).where('type', '=', 'donation.created').execute();
      return rows.find((r) => r.published_at !== null);
    }, 60_000, 'published');
    assert.equal(row.webhooks_at, null, 'never read: no dispatcher runs');
    await deletePublishedBefore(db(), Date.now() + 1);
    assert.equal(await outboxRow(row.id), undefined);
  });

  test('the first subscription starts it; events from before the subscription are not sent; unread rows wait for it', async () => {
    const r = await receiver();
    await f.donate(2); // before the subscription
    const sub = await f.subscribe(r.url, ['donation.created']);
    await until(() => f.t.app.ctx.webhooks.running, 60_000, 'the thread started');
    await f.donate(3);
    await until(() => r.received.length >= 1, 60_000, 'a delivery');
    // Everything up to now is read (the one from before without a delivery for it).
    await until(async () => (await db().selectFrom('outbox').select('id').where('webhooks_at', 'is', null).execute()).length === 0, 60_000, 'all read');
    assert.deepEqual(r.received.map((m) => m.json.data.amount), [3]);
    const deliveries = await db().selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', sub.id).execute();
    assert.equal(deliveries.length, 1);

    // A row the fan-out has not read (its alert delay is not over) stays past its retention while a subscription is kept.
    const held = await db()
      .insertInto('outbox')
      .values({ type: 'donation.created', user_id: f.userId, channels: '[]', payload: '{}', created_at: 1, published_at: 1, not_before: Date.now() + 3600_000 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await deletePublishedBefore(db(), Date.now());
    assert.ok(await outboxRow(held.id));
    await db().deleteFrom('outbox').where('id', '=', held.id).execute();
  });

  test('on SQLite the thread keeps the server\'s CPU priority by default (requests wait for its lock turns)', { skip: process.platform !== 'linux' }, async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    const tid = await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the thread started');
    assert.notEqual(tid, process.pid, 'a thread of its own, not the process');
    assert.equal(threadNice(tid), os.getPriority(process.pid));
  });
});

/** A thread's nice as the kernel shows it: field 19 of /proc/<pid>/task/<tid>/stat (the fields after the name's ')' start at 3). */
function threadNice(tid: number): number {
  const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]);
}

// Where PostgreSQL runs (always in CI).
for (const dialect of (await dialects()).filter((d) => d === 'postgres')) describe('webhook dispatcher thread on PostgreSQL', () => {
  const f = useWebhookFixture({ dialect });
  const receiver = receivers();

  test('on Linux it runs at a lower CPU priority (nice +10 by default); the requests\' thread keeps its own', { skip: process.platform !== 'linux' }, async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    const tid = await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the thread started');
    assert.notEqual(tid, process.pid, 'a thread of its own, not the process');
    const base = os.getPriority(process.pid);
    assert.equal(threadNice(tid), Math.min(19, base + 10));
    assert.equal(os.getPriority(tid), threadNice(tid), 'getpriority on the thread id agrees');
    assert.equal(os.getPriority(process.pid), base, 'the main thread is not touched');
    // It still delivers.
    await f.donate(7);
    await until(() => r.received.length >= 1, 60_000, 'a delivery');
  });
});

describe('WEBHOOKS_THREAD_NICE', () => {
  test('unset by default (the thread picks by its database); 0–19; anything else refused at start', () => {
    assert.equal(testConfig().webhooks.threadNice, null);
    assert.equal(testConfig({ WEBHOOKS_THREAD_NICE: '0' }).webhooks.threadNice, 0);
    assert.equal(testConfig({ WEBHOOKS_THREAD_NICE: '19' }).webhooks.threadNice, 19);
    for (const bad of ['-1', '20', 'low', '']) assert.throws(() => testConfig({ WEBHOOKS_THREAD_NICE: bad }), /WEBHOOKS_THREAD_NICE/);
  });
});
