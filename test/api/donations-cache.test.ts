import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { readCacheSwitch } from '../../src/api/read-cache.js';
import { buildApp } from '../../src/app.js';
import { envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { markDonationShown } from '../../src/modules/donations/donations.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { dialects, makeUser } from '../helper.js';
import { otherProcess, type OtherProcess } from '../other-process.js';
import { apiFixture, json, type ApiFixture } from './helpers.js';

/**
 * The donations page cache (src/api/read-cache.ts) is keyed by the streamer's donation counter
 * version, which triggers bump in the writing transaction (migration 0015). Every test here reads a
 * page first so it is cached, then writes, then reads again: a cache that missed the write would
 * answer the old page.
 */
for (const dialect of await dialects()) {
  describe(`donations page cache never serves a page a committed write changed (${dialect})`, () => {
    let f: ApiFixture;
    let other: OtherProcess;
    let secondDatabase: Database;
    let secondNode: FastifyInstance;
    before(async () => {
      f = await apiFixture({ dialect });
      other = await otherProcess(f.t.env);
      // Another node: its own app and connection (pool) on the same database, its own page cache.
      secondDatabase = createDatabase(envToConfig(readEnv({ ...f.t.env })).database);
      secondNode = await buildApp(f.t.config, { logger: false, database: secondDatabase, secrets: f.t.app.ctx.secrets });
      await secondNode.ready();
    });
    after(async () => {
      await secondNode.close();
      await secondDatabase.close();
      await other.close();
      await f.close();
    });

    const page = async (node: FastifyInstance = f.t.app, query = '') => {
      const res = await node.inject({ url: `/api/v1/alerts/donations${query}`, headers: f.auth() });
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const donate = (username: string) => createDonation(f.t.database.db, { userId: f.userId, amount: '3', currency: 'USD', username });

    test('a cached answer is byte-identical to a computed one', async () => {
      await donate('first');
      const first = await f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
      const second = await f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
      readCacheSwitch.enabled = false;
      try {
        const uncached = await f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
        assert.equal(second.body, first.body);
        assert.equal(uncached.body, first.body);
        assert.equal(second.headers['content-type'], 'application/json');
        assert.equal(second.headers['content-length'], uncached.headers['content-length']);
      } finally {
        readCacheSwitch.enabled = true;
      }
    });

    test('a new donation, a donation shown and a renamed streamer show up at once', async () => {
      const before = await page();
      const made = await donate('second');
      let now = await page();
      assert.equal(now.meta.total, before.meta.total + 1);
      assert.equal(now.data[0].id, made.id);
      await page(); // cached again
      await markDonationShown(f.t.database.db, f.userId, made.id);
      now = await page();
      assert.equal(now.data[0].is_shown, 1);
      assert.match(now.data[0].shown_at, /^\d{4}-/);
      await f.t.database.db.updateTable('users').set({ name: 'Renamed Streamer' }).where('id', '=', f.userId).execute();
      assert.equal((await page()).data[0].recipient_name, 'Renamed Streamer');
    });

    test('another streamer’s donations do not change this page, and its own writes still do', async () => {
      const before = await page();
      const stranger = await makeUser(f.t.database.db);
      await createDonation(f.t.database.db, { userId: stranger.id, amount: '9', currency: 'USD', username: 'elsewhere' });
      assert.deepEqual(await page(), before);
      const made = await donate('mine');
      assert.equal((await page()).data[0].id, made.id);
    });

    test('a donation and a donation shown by another process show up at once', async () => {
      const before = await page();
      const made = await other.call<{ id: number; username: string }>('modules/donations/donations.service.ts', 'createDonation', { userId: f.userId, amount: '4', currency: 'USD', username: 'from the CLI' });
      let now = await page();
      assert.equal(now.meta.total, before.meta.total + 1);
      assert.equal(now.data[0].id, made.id);
      assert.equal(now.data[0].username, 'from the CLI');
      await other.call('modules/donations/donations.repository.ts', 'markDonationShown', f.userId, made.id);
      now = await page();
      assert.equal(now.data[0].is_shown, 1);
    });

    test('another node serves what this node wrote, and this node what it wrote', async () => {
      const before = await page(secondNode);
      await page(); // cached on both nodes
      const made = await donate('via node one');
      const seen = await page(secondNode);
      assert.equal(seen.meta.total, before.meta.total + 1);
      assert.equal(seen.data[0].id, made.id);
      const fromSecond = await createDonation(secondDatabase.db, { userId: f.userId, amount: '5', currency: 'USD', username: 'via node two' });
      assert.equal((await page()).data[0].id, fromSecond.id);
    });

    test('deleted donations leave the page and its total; a disabled streamer’s cached page is not served', async () => {
      const before = await page();
      const victim = before.data[0].id as number;
      await f.t.database.db.deleteFrom('donations').where('id', '=', victim).execute();
      const now = await page();
      assert.equal(now.meta.total, before.meta.total - 1);
      assert.ok(!now.data.some((d: { id: number }) => d.id === victim));
      await f.t.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', f.userId).execute();
      const res = await f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
      assert.equal(res.statusCode, 401, res.body);
      await f.t.database.db.updateTable('users').set({ is_active: 1 }).where('id', '=', f.userId).execute();
    });

    test('the maintained counter equals count(*) after multi-row inserts, updates and deletes of several streamers', async () => {
      const db = f.t.database.db;
      const a = await makeUser(db);
      const b = await makeUser(db);
      const now = Date.now();
      const row = (userId: number, n: number) => ({
        user_id: userId, username: `bulk ${n}`, message_type: 'text' as const, message: '', amount: 100, currency: 'USD', amount_in_user_currency: 100,
        user_currency: 'USD', payin_system: null, is_shown: 0, created_at: now, shown_at: null, poll_option_id: null,
      });
      await db.insertInto('donations').values(Array.from({ length: 25 }, (_, n) => row(n % 3 ? a.id : b.id, n))).execute();
      await db.updateTable('donations').set({ is_shown: 1 }).where('user_id', 'in', [a.id, b.id]).execute();
      await db.deleteFrom('donations').where('user_id', '=', a.id).where('username', 'in', ['bulk 1', 'bulk 2', 'bulk 4']).execute();
      const counters = await db.selectFrom('donation_counters').selectAll().where('user_id', 'in', [a.id, b.id]).execute();
      for (const user of [a, b]) {
        const counted = await db.selectFrom('donations').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', user.id).executeTakeFirstOrThrow();
        assert.equal(counters.find((c) => c.user_id === user.id)?.total, Number(counted.n), `streamer ${user.id}`);
      }
      // Deleting a streamer removes their counter with them (and their donations' triggers do not fail).
      await db.deleteFrom('users').where('id', '=', b.id).execute();
      assert.equal(await db.selectFrom('donation_counters').select('user_id').where('user_id', '=', b.id).executeTakeFirst(), undefined);
    });
  });
}
