import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { isUniqueViolation } from '../../src/db/dialect.js';
import { ValidationError } from '../../src/domain/errors.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { findCustomAlertByExternalId, insertCustomAlert, listCustomAlerts, markCustomAlertShown } from '../../src/modules/custom-alerts/custom-alerts.repository.js';
import { createCustomAlert } from '../../src/modules/custom-alerts/custom-alerts.service.js';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';

for (const dialect of await dialects()) {
  describe(`custom alerts storage on ${dialect}`, () => {
    let t: TestDatabase;
    let userId: number;
    let clientId: number;
    before(async () => {
      t = await openTestDatabase(dialect);
      userId = (await makeUser(t.database.db)).id;
      clientId = (await createApp(t.database.db, randomBytes(32), { ownerId: userId, name: 'Repo test', redirectUris: ['https://x.example/cb'] })).app.client_id;
    });
    after(() => t.drop());

    const row = (externalId: string | null, extra: Partial<Parameters<typeof insertCustomAlert>[1]> = {}) => ({
      user_id: userId, client_id: clientId, external_id: externalId, header: null, message: null, image_url: null, sound_url: null, is_shown: 0, created_at: Date.now(), shown_at: null, ...extra,
    });
    const count = async (table: 'custom_alerts' | 'outbox') =>
      Number((await t.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    test('rows round-trip with numbers for ids and times; null external_ids never collide', async () => {
      const created = Date.now();
      const a = await insertCustomAlert(t.database.db, row(null, { header: 'ħéллo 😀', created_at: created }));
      const b = await insertCustomAlert(t.database.db, row(null));
      assert.equal(typeof a.id, 'number');
      assert.ok(b.id > a.id);
      assert.equal(a.created_at, created);
      assert.equal(a.header, 'ħéллo 😀');
      const list = await listCustomAlerts(t.database.db, userId, 10);
      assert.deepEqual(list.slice(0, 2).map((r) => r.id), [b.id, a.id], 'newest first');
    });

    test('external_id is unique per application and streamer, and the violation is recognised', async () => {
      await insertCustomAlert(t.database.db, row('dup-1'));
      const err = await insertCustomAlert(t.database.db, row('dup-1')).catch((e: unknown) => e);
      assert.ok(isUniqueViolation(err, 'external_id'), `unique violation on external_id: ${String(err)}`);
      const other = await makeUser(t.database.db);
      await insertCustomAlert(t.database.db, row('dup-1', { user_id: other.id }));
      assert.equal((await findCustomAlertByExternalId(t.database.db, clientId, userId, 'dup-1'))?.user_id, userId);
    });

    test('createCustomAlert writes the alert and its widget event in one transaction', async () => {
      const [alertsBefore, eventsBefore] = [await count('custom_alerts'), await count('outbox')];
      const data = await createCustomAlert(t.database.db, { userId, clientId, externalId: 'svc-1', header: 'Hi', message: '', isShown: 0, imageUrl: 'https://example.com/i.png' });
      assert.equal(data.message, null, 'empty means none');
      assert.equal(data.image_url, 'https://example.com/i.png');
      assert.deepEqual([await count('custom_alerts'), await count('outbox')], [alertsBefore + 1, eventsBefore + 1]);
      const event = await t.database.db.selectFrom('outbox').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(event.channels), [`$widget:alerts_${userId}`]);
      assert.deepEqual(JSON.parse(event.payload), { ...data, name: 'custom', reason: 'custom' });
    });

    test('racing inserts of one external_id: one alert, the others a ValidationError on external_id', async () => {
      const [alertsBefore, eventsBefore] = [await count('custom_alerts'), await count('outbox')];
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => createCustomAlert(t.database.db, { userId, clientId, externalId: 'race-1' })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
        assert.ok(r.reason instanceof ValidationError, String(r.reason));
        assert.deepEqual(Object.keys(r.reason.errors), ['external_id']);
      }
      assert.deepEqual([await count('custom_alerts'), await count('outbox')], [alertsBefore + 1, eventsBefore + 1]);
    });

    test('when the event cannot be written, the alert is not stored either', async () => {
      const db = t.database.db;
      if (dialect === 'sqlite') {
        await sql`create trigger refuse_widget before insert on outbox when new.channels like '%$widget:%' begin select raise(abort, 'outbox refused'); end`.execute(db);
      } else {
        await sql`create function refuse_widget() returns trigger language plpgsql as $$ begin raise exception 'outbox refused'; end $$`.execute(db);
        await sql`create trigger refuse_widget before insert on outbox for each row when (new.channels like '%$widget:%') execute function refuse_widget()`.execute(db);
      }
      try {
        const alertsBefore = await count('custom_alerts');
        await assert.rejects(createCustomAlert(db, { userId, clientId, externalId: 'atomic-1', header: 'never' }), /outbox refused/);
        assert.equal(await count('custom_alerts'), alertsBefore);
        assert.equal(await findCustomAlertByExternalId(db, clientId, userId, 'atomic-1'), undefined);
      } finally {
        await sql`drop trigger refuse_widget${dialect === 'postgres' ? sql` on outbox` : sql``}`.execute(db);
      }
    });

    test('validation in the service too (for callers other than HTTP)', async () => {
      await assert.rejects(createCustomAlert(t.database.db, { userId, clientId, header: 'x'.repeat(256), soundUrl: 'https:///a.mp3' }), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.deepEqual(Object.keys(err.errors).sort(), ['header', 'sound_url']);
        return true;
      });
    });

    test('marking shown sets shown_at once', async () => {
      const a = await insertCustomAlert(t.database.db, row(null));
      const first = await markCustomAlertShown(t.database.db, userId, a.id, 1_700_000_000_000);
      assert.deepEqual([first?.is_shown, first?.shown_at], [1, 1_700_000_000_000]);
      const again = await markCustomAlertShown(t.database.db, userId, a.id, 1_800_000_000_000);
      assert.equal(again?.shown_at, 1_700_000_000_000);
    });
  });
}
