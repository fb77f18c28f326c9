import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { dialects } from '../helper.js';
import { apiFixture, type ApiFixture } from './helpers.js';

/**
 * A slow PostgreSQL: another session holds a lock every read of the donations page needs, so the
 * node's few pooled connections hang. Requests then wait, and those that get no connection within
 * the acquire timeout fail with 503 and Retry-After — none answers a wrong page.
 */
const onPostgres = (await dialects()).includes('postgres');

describe('a slow PostgreSQL makes the donations page wait or fail cleanly', { skip: !onPostgres && 'PostgreSQL is not reachable' }, () => {
  let f: ApiFixture;
  let database: Database;
  let node: FastifyInstance;
  before(async () => {
    f = await apiFixture({ dialect: 'postgres' });
    for (let i = 0; i < 3; i++) await createDonation(f.t.database.db, { userId: f.userId, amount: '2', currency: 'USD', username: `before ${i}` });
    database = createDatabase(envToConfig(readEnv({ ...f.t.env })).database, { max: 2, acquireTimeoutMs: 300 });
    node = await buildApp(f.t.config, { logger: false, database, secrets: f.t.app.ctx.secrets });
    await node.ready();
  });
  after(async () => {
    await node.close();
    await database.close();
    await f.close();
  });

  test('while the lock is held: 503 with Retry-After for those without a connection, the correct page for the rest once it is released', async () => {
    const page = () => node.inject({ url: '/api/v1/alerts/donations', headers: f.auth() });
    assert.equal((await page()).statusCode, 200, 'warm: the token is verified and cached');
    const locker = new pg.Client({ connectionString: f.t.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table donation_counters in access exclusive mode');
      const pending = Array.from({ length: 6 }, page);
      // The two pooled connections are stuck behind the lock; the others give up after 300 ms.
      const early = await Promise.race([Promise.allSettled(pending.slice(2)), new Promise((r) => setTimeout(r, 5000, 'timeout'))]);
      assert.notEqual(early, 'timeout');
      await locker.query('commit');
      const answers = await Promise.all(pending);
      const failed = answers.filter((a) => a.statusCode === 503);
      const served = answers.filter((a) => a.statusCode === 200);
      assert.ok(failed.length >= 1, `some requests failed cleanly (${answers.map((a) => a.statusCode).join(', ')})`);
      assert.equal(failed.length + served.length, answers.length, `only 200 or 503 (${answers.map((a) => a.statusCode).join(', ')})`);
      for (const res of failed) {
        assert.equal(res.headers['retry-after'], '2');
        assert.equal(res.headers['content-type'], 'application/json');
        assert.match(res.json().message, /try again/);
      }
      for (const res of served) {
        const body = res.json();
        assert.equal(body.meta.total, 3);
        assert.deepEqual(body.data.map((d: { username: string }) => d.username), ['before 2', 'before 1', 'before 0']);
      }
    } finally {
      await locker.end();
    }
    assert.equal((await page()).statusCode, 200, 'answers again once the database does');
  });
});
