import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { describe, test } from 'node:test';
import { deletePublishedBefore } from '../../src/modules/outbox/outbox.repository.js';
import { until } from '../wait.js';
import { receivers } from './receiver.js';
import { useWebhookFixture, WEBHOOK_TEST_ENV } from './fixture.js';
import { WebhookDispatcherThread } from '../../src/modules/webhooks/dispatcher-thread.js';
import { ClaimOwner } from '../../src/modules/outbox/claim-owner.js';
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

  test('on Linux it runs in the idle scheduling class by default, its nice untouched; the requests\' thread keeps its own class; it delivers', { skip: process.platform !== 'linux' }, async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    const tid = await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the thread started');
    assert.notEqual(tid, process.pid, 'a thread of its own, not the process');
    assert.deepEqual(threadScheduling(tid), { policy: SCHED_IDLE, nice: os.getPriority(process.pid) });
    assert.equal(threadScheduling(process.pid).policy, SCHED_OTHER, 'the main thread is not touched');
    await f.donate(9);
    await until(() => r.received.some((m) => m.json.data.amount === 9), 60_000, 'a delivery');
  });
});

const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/**
 * A thread's scheduling class and nice as the kernel shows them: fields 41 and 19 of
 * /proc/<pid>/task/<tid>/stat (the fields after the name's ')' start at 3).
 */
function threadScheduling(tid: number): { policy: number; nice: number } {
  const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) };
}

// Where PostgreSQL runs (always in CI).
for (const dialect of (await dialects()).filter((d) => d === 'postgres')) describe('webhook dispatcher thread on PostgreSQL', () => {
  const f = useWebhookFixture({ dialect });
  const receiver = receivers();

  test('on Linux it runs in the idle scheduling class by default; it delivers', { skip: process.platform !== 'linux' }, async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    const tid = await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the thread started');
    assert.deepEqual(threadScheduling(tid), { policy: SCHED_IDLE, nice: os.getPriority(process.pid) });
    await f.donate(7);
    await until(() => r.received.length >= 1, 60_000, 'a delivery');
  });
});

for (const [setting, expected] of [['10', 'nice +10, ordinary class'], ['0', 'the requests\' priority']] as const) describe(`WEBHOOKS_THREAD_NICE=${setting}`, () => {
  const f = useWebhookFixture({ env: { WEBHOOKS_THREAD_NICE: setting } });
  const receiver = receivers();

  test(`on Linux the thread runs at ${expected}; the requests' thread keeps its own; it delivers`, { skip: process.platform !== 'linux' }, async () => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    const tid = await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the thread started');
    const base = os.getPriority(process.pid);
    assert.deepEqual(threadScheduling(tid), { policy: SCHED_OTHER, nice: Math.min(19, base + Number(setting)) });
    assert.equal(os.getPriority(tid), threadScheduling(tid).nice, 'getpriority on the thread id agrees');
    assert.deepEqual(threadScheduling(process.pid), { policy: SCHED_OTHER, nice: base }, 'the main thread is not touched');
    await f.donate(8);
    await until(() => r.received.length >= 1, 60_000, 'a delivery');
  });
});

describe('webhook dispatcher thread without chrt', () => {
  const f = useWebhookFixture();
  const receiver = receivers();

  test('it says what to do, stays in the ordinary class, and delivers', { skip: process.platform !== 'linux' }, async (t) => {
    const r = await receiver();
    await f.subscribe(r.url, ['donation.created']);
    // The app's own thread first, so that it does not start in the moment PATH is changed below.
    await until(() => f.t.app.ctx.webhooks.osThreadId, 60_000, 'the app\'s thread started');
    // A second dispatcher of our own beside the app's (as a second node would be), started with a
    // PATH where no chrt is: a thread takes the environment it is started with.
    const warnings: { obj: object; msg?: string }[] = [];
    const logger = { warn: (obj: object, msg?: string) => warnings.push({ obj, msg }), error: () => {}, info: () => {} };
    const config = testConfig(WEBHOOK_TEST_ENV).webhooks;
    const thread = new WebhookDispatcherThread(f.t.database, { config, encryptionKey: f.t.app.ctx.secrets.encryptionKey, owner: new ClaimOwner('no-chrt-node'), logger });
    const path = process.env.PATH;
    process.env.PATH = fs.mkdtempSync(`${os.tmpdir()}/no-chrt-`);
    try {
      await thread.start();
    } finally {
      process.env.PATH = path;
    }
    t.after(() => thread.stop());
    const tid = await until(() => thread.osThreadId, 60_000, 'the thread started');
    assert.equal(threadScheduling(tid).policy, SCHED_OTHER);
    const warning = await until(() => warnings.find((w) => /idle scheduling class/.test(w.msg ?? '')), 60_000, 'the warning');
    assert.match(warning.msg!, /chrt.*util-linux.*WEBHOOKS_THREAD_NICE=10/);
    await f.donate(6);
    await until(() => r.received.some((m) => m.json.data.amount === 6), 60_000, 'a delivery');
  });
});

describe('WEBHOOKS_THREAD_NICE', () => {
  test('idle by default and by name; 0–19; anything else refused at start, saying what is accepted', () => {
    assert.equal(testConfig().webhooks.threadNice, 'idle');
    assert.equal(testConfig({ WEBHOOKS_THREAD_NICE: 'idle' }).webhooks.threadNice, 'idle');
    assert.equal(testConfig({ WEBHOOKS_THREAD_NICE: '0' }).webhooks.threadNice, 0);
    assert.equal(testConfig({ WEBHOOKS_THREAD_NICE: '19' }).webhooks.threadNice, 19);
    for (const bad of ['-1', '20', 'low', '', 'IDLE']) assert.throws(() => testConfig({ WEBHOOKS_THREAD_NICE: bad }), /WEBHOOKS_THREAD_NICE.*use idle \(the default\), or 0–19/);
  });
});
