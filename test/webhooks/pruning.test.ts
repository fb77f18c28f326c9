import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { testConfig, dialects } from '../helper.js';
import { encryptSecret } from '../../src/security/crypto.js';
import * as repo from '../../src/modules/webhooks/webhooks.repository.js';
import { pruneWebhookLog } from '../../src/modules/webhooks/webhooks.pruning.js';
import type { DeliveryStatus } from '../../src/modules/webhooks/webhooks.table.js';
import { webhookFixture, type WebhookFixture } from './fixture.js';

const DAY = 24 * 3600_000;

/**
 * The delivery log is pruned after WEBHOOKS_LOG_RETENTION: finished deliveries older than it go
 * with their attempts (in batches), pending ones stay whatever their age, and removed subscriptions
 * go once nothing of their log is left.
 */
for (const dialect of await dialects()) {
  describe(`webhook log pruning (${dialect})`, () => {
    let f: WebhookFixture;
    after(() => f?.close());

    test('old finished deliveries and their attempts go, in batches; pending and recent ones stay; then removed subscriptions', async () => {
      // The app's own hourly round (1 s after ready) must not prune these rows first: a retention
      // longer than any of them keeps it off; the calls below give theirs.
      f = await webhookFixture({ dialect, env: { WEBHOOKS_LOG_RETENTION: '365' } });
      const db = f.t.database.db;
      const now = Date.now();
      const subscription = async (status: 'active' | 'removed', statusAt: number | null) => {
        const row = await repo.insertSubscription(db, { app_id: f.clientId, user_id: f.userId, url: 'https://hooks.example.test/x', events: '["donation.created"]', secret_sealed: encryptSecret(f.t.app.ctx.secrets.encryptionKey, 'whsec_x'), now: now - 90 * DAY });
        if (status === 'removed') await repo.removeSubscription(db, row.id, 'deleted_by_app', statusAt!);
        return row.id;
      };
      const delivery = async (subscriptionId: number, status: DeliveryStatus, finishedAt: number | null) => {
        await db.transaction().execute((tx) =>
          repo.insertDeliveries(tx, [{ subscription_id: subscriptionId, message_id: 'msg_1', event_type: 'donation.created', body: '{}', status, next_attempt_at: now, window_start: now, created_at: finishedAt ?? now, finished_at: finishedAt }]),
        );
        const [row] = (await repo.allDeliveriesOf(db, subscriptionId)).slice(-1);
        await db.transaction().execute((tx) => repo.insertAttempts(tx, [{ deliveryId: row!.id, at: finishedAt ?? now, statusCode: 200, error: null, latencyMs: 3, excerpt: 'ok' }]));
        return row!.id;
      };

      // Disabled (its retry window ran out): the running dispatcher leaves its pending delivery alone.
      const live = await subscription('active', null);
      await repo.disableSubscription(db, live, 'retries_exhausted', now);
      const old: number[] = [];
      for (let i = 0; i < 7; i++) old.push(await delivery(live, (['delivered', 'failed', 'cancelled'] as const)[i % 3], now - 40 * DAY + i));
      const recent = await delivery(live, 'delivered', now - 2 * DAY);
      const stuck = await delivery(live, 'pending', null); // a disabled subscription's queue: kept
      await db.updateTable('webhook_deliveries').set({ created_at: now - 60 * DAY }).where('id', '=', stuck).execute();
      // Removed 40 days ago with an old log: both go. Removed yesterday: its subscription row stays.
      const goneLongAgo = await subscription('removed', now - 40 * DAY);
      await db.updateTable('webhook_deliveries').set({ finished_at: now - 40 * DAY }).where('subscription_id', '=', goneLongAgo).execute();
      const goneOld = await delivery(goneLongAgo, 'cancelled', now - 40 * DAY);
      const goneRecently = await subscription('removed', now - DAY);

      // Batches of 3: 8 old deliveries take three transactions.
      const deleted = await pruneWebhookLog(db, 30 * DAY, now, 3);
      assert.equal(deleted, 8);
      const left = (await db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute()).map((r) => Number(r.id));
      assert.deepEqual(left, [recent, stuck]);
      const attempts = (await db.selectFrom('webhook_attempts').select('delivery_id').orderBy('delivery_id').execute()).map((r) => Number(r.delivery_id));
      assert.deepEqual(attempts, [recent, stuck], 'the attempts of pruned deliveries went with them');
      for (const id of [...old, goneOld]) assert.equal(await repo.findDelivery(db, id), undefined);
      assert.equal(await repo.findSubscription(db, goneLongAgo), undefined);
      assert.ok(await repo.findSubscription(db, goneRecently));
      assert.ok(await repo.findSubscription(db, live));

      // Nothing more to do: a second round deletes nothing.
      assert.equal(await pruneWebhookLog(db, 30 * DAY, now, 3), 0);
      // A shorter retention reaches the recent one.
      assert.equal(await pruneWebhookLog(db, DAY, now, 3), 1);
      assert.deepEqual((await db.selectFrom('webhook_deliveries').select('id').execute()).map((r) => Number(r.id)), [stuck]);
    });
  });
}

describe('WEBHOOKS_LOG_RETENTION', () => {
  test('days, 30 by default; out of range or not a number is refused at start', () => {
    assert.equal(testConfig().webhooks.logRetentionMs, 30 * DAY);
    assert.equal(testConfig({ WEBHOOKS_LOG_RETENTION: '7' }).webhooks.logRetentionMs, 7 * DAY);
    for (const bad of ['0', '-1', 'week', '3651']) assert.throws(() => testConfig({ WEBHOOKS_LOG_RETENTION: bad }), /WEBHOOKS_LOG_RETENTION/);
  });
});
