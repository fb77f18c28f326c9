import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { allDeliveriesOf } from '../../src/modules/webhooks/webhooks.repository.js';
import { json } from '../api/helpers.js';
import { dialects } from '../helper.js';
import { until } from '../wait.js';
import { receivers } from './receiver.js';
import { useWebhookFixture } from './fixture.js';

/**
 * The attempt that delivered a message is kept on its delivery row on PostgreSQL (migration 0025,
 * deliveredRecord) and in webhook_attempts otherwise: by SQLite, by a batch with a failure in it,
 * and by a node of the previous version during a rolling upgrade. The log reads all of them alike.
 */
for (const dialect of await dialects()) {
  describe(`the delivering attempt in the log (${dialect})`, () => {
    const f = useWebhookFixture({ dialect });
    const receiver = receivers();
    const db = () => f.t.database.db;
    const log = async (subId: number) => {
      const response = await f.t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${subId}/deliveries`, headers: f.auth() });
      assert.equal(response.statusCode, 200, response.body);
      return json(response).data as { message_id: string; status: string; finished_at: string; attempts: { attempted_at: string; status_code: number | null; error: string | null; latency_ms: number; response_excerpt: string | null }[] }[];
    };

    test('a retried message and one delivered at once: every attempt in order, with status, latency and excerpt', async () => {
      const r = await receiver();
      r.behave = (_req, n) => (n === 1 ? { status: 503, body: 'busy' } : { status: 200, body: `thanks ${n}` });
      const sub = await f.subscribe(r.url, ['donation.created']);
      await f.donate(1);
      await until(async () => (await allDeliveriesOf(db(), sub.id)).every((d) => d.status === 'delivered') && r.received.length >= 2, 60_000, 'the first delivered');
      await f.donate(2);
      const rows = await until(async () => {
        const all = await allDeliveriesOf(db(), sub.id);
        return all.length === 2 && all.every((d) => d.status === 'delivered') ? all : null;
      }, 60_000, 'both delivered');

      const [second, first] = await log(sub.id);
      assert.deepEqual(first!.attempts.map((a) => [a.status_code, a.response_excerpt]), [[503, 'busy'], [200, 'thanks 2']]);
      assert.deepEqual(second!.attempts.map((a) => [a.status_code, a.response_excerpt]), [[200, 'thanks 3']]);
      for (const d of [first!, second!]) {
        assert.ok(d.attempts.every((a) => a.error === null && Number.isInteger(a.latency_ms) && a.latency_ms >= 0));
        assert.equal(d.attempts.at(-1)!.attempted_at, d.finished_at, 'delivered by its last attempt');
      }

      // Where each was kept: the delivering attempts of an all-delivered batch on the delivery row,
      // on both dialects; the 503 has its row.
      const attemptRows = await db().selectFrom('webhook_attempts').select(['delivery_id', 'status_code']).where('delivery_id', 'in', rows.map((d) => d.id)).orderBy('id').execute();
      assert.deepEqual(attemptRows.map((a) => a.status_code), [503]);
      assert.deepEqual(rows.map((d) => [d.delivered_latency_ms !== null, d.delivered_excerpt]), [[true, 'thanks 2'], [true, 'thanks 3']]);
    });

    test('a delivery recorded as the previous version records it (an attempt row, nothing on the delivery row) reads the same', async () => {
      const r = await receiver();
      const sub = await f.subscribe(r.url, ['donation.created']);
      // The previous version's record of a delivered attempt, on the migrated table: the mark without
      // the new columns, and the attempt's log row.
      const now = Date.now();
      const delivery = await db()
        .insertInto('webhook_deliveries')
        .values({ subscription_id: sub.id, message_id: 'msg_old', event_type: 'donation.created', body: '{}', status: 'pending', next_attempt_at: now, window_start: now, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await sql`update webhook_deliveries set status = 'delivered', finished_at = ${now}, attempts = attempts + 1, last_status_code = 204, last_error = null where id = ${delivery.id}`.execute(db());
      await sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, error, latency_ms, response_excerpt) values (${delivery.id}, ${now}, 204, null, 7, '')`.execute(db());

      const [logged] = await log(sub.id);
      assert.equal(logged!.message_id, 'msg_old');
      assert.equal(logged!.status, 'delivered');
      assert.deepEqual(logged!.attempts.map((a) => [a.status_code, a.latency_ms, a.response_excerpt]), [[204, 7, '']], 'once, not twice');
    });
  });
}
