import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase } from '../../src/db/database.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import * as repo from '../../src/modules/webhooks/webhooks.repository.js';
import { dialects, PG_URL, postgresAdmin, tempDir } from '../helper.js';

/**
 * Migration 0024 on a database that already has deliveries, each with its own copy of the body:
 * every message keeps its body once, the deliveries (pending, delivered, redelivered) refer to it,
 * and the queue reads its bodies from there.
 */
for (const dialect of await dialects()) {
  test(`${dialect}: migration 0024 keeps one body per message for the deliveries already logged`, async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    if (dialect === 'postgres') await postgresAdmin(`create schema ${schema}`);
    const database = dialect === 'sqlite' ? createDatabase({ dialect, file: `${tempDir()}/old.sqlite` }) : createDatabase({ dialect, url: PG_URL, schema });
    const db = database.db as Kysely<any>;
    try {
      await migrateTo(db, '0023_webhook_log_pruning');
      const now = Date.now();
      const user = await db
        .insertInto('users')
        .values({ email: 's@example.test', password_hash: 'x', code: 's', name: 's', name_key: 's', avatar: null, language: 'en_US', currency: 'USD', is_active: 1, role: 'streamer', merchandise_promocode: 'SXXXXXXX', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const app = await db.insertInto('apps').values({ owner_id: user.id, name: 'Bot', secret_sealed: 'x', redirect_uris: '[]', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
      const sub = async () =>
        (await db.insertInto('webhook_subscriptions').values({ app_id: app.id, user_id: user.id, url: 'https://hooks.example.test/', events: '["donation.created"]', secret_sealed: 'x', status: 'active', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
      const [a, b] = [await sub(), await sub()];
      const delivery = async (subscriptionId: number, messageId: string, body: string, status: string, createdAt: number) =>
        (await db
          .insertInto('webhook_deliveries')
          .values({ subscription_id: subscriptionId, message_id: messageId, event_type: 'donation.created', body, status, next_attempt_at: createdAt, window_start: createdAt, created_at: createdAt, finished_at: status === 'pending' ? null : createdAt })
          .returning('id')
          .executeTakeFirstOrThrow()).id;
      const first = '{"type":"donation.created","data":{"id":1}}';
      const second = '{"type":"donation.created","data":{"id":2}}';
      const delivered = await delivery(a, 'msg_1', first, 'delivered', now - 1000);
      const pendingB = await delivery(b, 'msg_1', first, 'pending', now - 1000);
      const redelivered = await delivery(a, 'msg_1', first, 'pending', now);
      const pendingA = await delivery(a, 'msg_2', second, 'pending', now - 500);
      await db.insertInto('webhook_attempts').values({ delivery_id: delivered, attempted_at: now, status_code: 200, error: null, latency_ms: 3, response_excerpt: 'ok' }).execute();

      await migrateToLatest(db);

      const messages = await db.selectFrom('webhook_messages').selectAll().orderBy('message_id').execute();
      assert.deepEqual(
        messages.map((m) => [m.message_id, m.body, Number(m.created_at)]),
        [['msg_1', first, now - 1000], ['msg_2', second, now - 500]],
        'one body per message, made when its first delivery was',
      );
      const columns = Object.keys(await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivered).executeTakeFirstOrThrow());
      assert.ok(!columns.includes('body'), 'the copies are gone from the deliveries');
      assert.deepEqual((await repo.queueHeads(database.db, a, 10)).map((h) => [h.id, h.message_id, h.body]), [[redelivered, 'msg_1', first], [pendingA, 'msg_2', second]]);
      assert.deepEqual((await repo.queueHeads(database.db, b, 10)).map((h) => [h.id, h.body]), [[pendingB, first]]);
      assert.deepEqual((await repo.attemptsOf(database.db, [delivered])).map((x) => x.status_code), [200], 'the log keeps its attempts');
    } finally {
      await database.close();
      if (dialect === 'postgres') await postgresAdmin(`drop schema ${schema} cascade`);
    }
  });
}
