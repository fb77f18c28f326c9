import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { ConfigError, envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';
import { createDatabase, DatabaseUnavailableError, type Database } from '../../src/db/database.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { dialects, PG_URL } from '../helper.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { sql } from 'kysely';
import { apiFixture, type ApiFixture } from '../api/helpers.js';

/**
 * A stuck statement (another session holds a lock it needs) ends after DATABASE_STATEMENT_TIMEOUT_MS:
 * PostgreSQL cancels it, the request answers 503 + Retry-After, nothing half-done is left behind, and
 * once the lock is gone everything is answered and stored correctly.
 */
const onPostgres = (await dialects()).includes('postgres');

describe('DATABASE_STATEMENT_TIMEOUT_MS', () => {
  test('is a whole number of milliseconds, 10 s by default, 0 for no limit; only for PostgreSQL', () => {
    const url = 'postgres://u@127.0.0.1:5432/db';
    const timeout = (value?: string) => {
      const database = envToConfig(readEnv({ DATABASE_URL: url, ...(value === undefined ? {} : { DATABASE_STATEMENT_TIMEOUT_MS: value }) })).database;
      return database.dialect === 'postgres' ? database.statementTimeoutMs : undefined;
    };
    assert.equal(timeout(), 10_000);
    assert.equal(timeout('0'), 0);
    assert.equal(timeout('2500'), 2500);
    assert.throws(() => timeout('2.5s'), ConfigError);
    assert.throws(() => timeout('-1'), ConfigError);
  });

  test('migrations run without the limit; statements after them have it again', { skip: !onPostgres && 'PostgreSQL is not reachable' }, async () => {
    const schema = `t_st_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    // 1 ms: every migration statement would be cancelled under it; one connection, so the reset is seen.
    const database = createDatabase({ dialect: 'postgres', url: PG_URL, schema, statementTimeoutMs: 1 }, { max: 1 });
    try {
      await migrateToLatest(database.db);
      const applied = await admin.query(`select count(*)::int as n from ${schema}.kysely_migration`);
      assert.ok(applied.rows[0].n > 10, 'every migration applied');
      await assert.rejects(sql`select pg_sleep(0.2)`.execute(database.db), DatabaseUnavailableError);
    } finally {
      await database.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  });

  describe('on a PostgreSQL that is stuck behind a lock', { skip: !onPostgres && 'PostgreSQL is not reachable' }, () => {
    let f: ApiFixture;
    let database: Database;
    let node: FastifyInstance;
    let locker: pg.Client;
    before(async () => {
      f = await apiFixture({ dialect: 'postgres' });
      await createDonation(f.t.database.db, { userId: f.userId, amount: '2', currency: 'USD', username: 'before' });
      // Enough connections that nobody waits for one: only the statement timeout can end the wait.
      database = createDatabase(envToConfig(readEnv({ ...f.t.env, DATABASE_STATEMENT_TIMEOUT_MS: '300' })).database, { max: 8, acquireTimeoutMs: 60_000 });
      node = await buildApp(f.t.config, { logger: false, database, secrets: f.t.app.ctx.secrets });
      await node.ready();
      locker = new pg.Client({ connectionString: f.t.env.DATABASE_URL });
      await locker.connect();
    });
    after(async () => {
      await locker.end();
      await node.close();
      await database.close();
      await f.close();
    });

    async function whileLocked<T>(table: string, work: () => Promise<T>): Promise<T> {
      await locker.query('begin');
      await locker.query(`lock table ${table} in access exclusive mode`);
      try {
        // Far longer than the timeout: a hang would fail the test's own timeout instead.
        return await Promise.race([work(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting after 20 s')), 20_000))]);
      } finally {
        await locker.query('rollback');
      }
    }

    test('a read waiting on the lock answers 503 with Retry-After, then the right page once it is gone', async () => {
      const page = () => node.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
      assert.equal((await page()).statusCode, 200, 'warm: the token is verified and cached');
      const answers = await whileLocked('donation_counters', () => Promise.all(Array.from({ length: 3 }, page)));
      for (const res of answers) {
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '2');
        assert.match(res.json().message, /try again/);
      }
      const after = await page();
      assert.equal(after.statusCode, 200);
      assert.deepEqual(after.json().data.map((d: { username: string }) => d.username), ['before']);
    });

    test('donations waiting on the lock fail with DatabaseUnavailableError and store nothing; the next ones are stored', async () => {
      const db = database.db;
      const count = async () => Number((await db.selectFrom('donations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const events = async () => Number((await db.selectFrom('outbox').select((eb) => eb.fn.countAll().as('n')).where('type', '=', 'donation.created').executeTakeFirstOrThrow()).n);
      const [donations0, events0] = [await count(), await events()];
      const outcomes = await whileLocked('donations', () =>
        Promise.allSettled(Array.from({ length: 4 }, (_, i) => createDonation(db, { userId: f.userId, amount: '3', currency: 'USD', username: `stuck ${i}` }))),
      );
      for (const o of outcomes) assert.ok(o.status === 'rejected' && o.reason instanceof DatabaseUnavailableError, String(o.status === 'rejected' ? o.reason : 'fulfilled'));
      assert.equal(await count(), donations0, 'nothing stored');
      assert.equal(await events(), events0, 'no alert queued');
      const later = await createDonation(db, { userId: f.userId, amount: '3', currency: 'USD', username: 'later' });
      assert.equal((await db.selectFrom('donations').select('username').where('id', '=', later.id).executeTakeFirstOrThrow()).username, 'later');
      assert.equal(await count(), donations0 + 1);
      const counter = await db.selectFrom('donation_counters').select('total').where('user_id', '=', f.userId).executeTakeFirstOrThrow();
      assert.equal(Number(counter.total), donations0 + 1, 'the counter moved with the stored donation only');
    });
  });
});
