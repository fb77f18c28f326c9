import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { NodeRegistry } from '../../src/ops/node-registry.js';
import { RedisBroker } from '../../src/realtime/broker-redis.js';
import { buildTestApp, openTestDatabase, postgresAvailable, REDIS_URL, redisAvailable, testConfig } from '../helper.js';
import { until } from '../wait.js';

describe('/readyz', () => {
  test('ready: database answers, migrations current, broker connected; no warnings on one SQLite node', async () => {
    const t = await buildTestApp();
    try {
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { status: 'ready', database: true, migrations: 'current', broker: 'connected', warnings: [] });
    } finally {
      await t.close();
    }
  });

  test('a migration missing from the database makes the node unready (503, "pending")', async () => {
    const t = await buildTestApp();
    try {
      const last = await t.database.db.selectFrom(DEFAULT_MIGRATION_TABLE as any).select('name').orderBy('name', 'desc').executeTakeFirstOrThrow();
      await t.database.db.deleteFrom(DEFAULT_MIGRATION_TABLE as any).where('name', '=', (last as { name: string }).name).execute();
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().status, 'unavailable');
      assert.equal(res.json().migrations, 'pending');
    } finally {
      await t.close();
    }
  });

  test('a database migrated by a newer version stays ready but says so', async () => {
    const t = await buildTestApp();
    try {
      await t.database.db.insertInto(DEFAULT_MIGRATION_TABLE as any).values({ name: '9999_from_the_future', timestamp: new Date().toISOString() }).execute();
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().migrations, 'current');
      assert.match(res.json().warnings[0], /9999_from_the_future.*newer version.*upgrade this node/);
    } finally {
      await t.close();
    }
  });

  test('a database that stops answering makes the node unready', async () => {
    const t = await buildTestApp();
    try {
      await t.database.close();
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().database, false);
    } finally {
      await t.app.close();
    }
  });
});

const withRedis = await redisAvailable();
const withPostgres = await postgresAvailable();

describe('Redis broker connection state (what /readyz reports as broker)', () => {
  test('unreachable Redis: not connected', async () => {
    const broker = new RedisBroker({ url: 'redis://127.0.0.1:1' });
    try {
      assert.equal(broker.connected(), false);
    } finally {
      await broker.close();
    }
  });

  test('reachable Redis: connected once both connections are up', { skip: !withRedis && 'no Redis' }, async () => {
    const broker = new RedisBroker({ url: REDIS_URL, prefix: `oa-test.ready.${process.pid}` });
    try {
      await broker.subscribe('x');
      await until(() => broker.connected(), 3000, 'both Redis connections ready');
    } finally {
      await broker.close();
    }
  });
});

describe('several nodes on one PostgreSQL database', { skip: !withPostgres && 'no PostgreSQL' }, () => {
  test('without a shared broker: /readyz of both nodes says so and stays 200; one node alone has no warning', async () => {
    const db = await openTestDatabase('postgres');
    const build = async () => {
      const app = await buildApp(testConfig(db.env), { database: db.database, logger: false });
      await app.ready();
      return app;
    };
    const a = await build();
    try {
      const alone = (await a.inject({ url: '/readyz' })).json();
      assert.equal(alone.nodes, 1);
      assert.deepEqual(alone.warnings, []);

      const b = await build();
      try {
        const fromB = await b.inject({ url: '/readyz' });
        assert.equal(fromB.statusCode, 200, 'a warning does not take the node out of the load balancer');
        assert.equal(fromB.json().nodes, 2);
        assert.match(fromB.json().warnings[0], /2 OpenAlerts nodes share this database but REDIS_URL is not set/);
        // The first node notices at its next heartbeat.
        await a.ctx.nodes!.check();
        assert.match((await a.inject({ url: '/readyz' })).json().warnings[0], /REDIS_URL is not set/);
      } finally {
        await b.close();
      }
      // B removed its row on close: A is alone again.
      assert.equal((await a.ctx.nodes!.check()).warning, null);
      const rows = await sql<{ n: number }>`select count(*)::int as n from server_nodes`.execute(db.database.db);
      assert.equal(rows.rows[0]!.n, 1);
    } finally {
      await a.close();
      await db.drop();
    }
  });

  test('the warning is logged at error level when it starts and once more when it ends; nodes on one Redis are fine', async () => {
    const db = await openTestDatabase('postgres');
    const lines: { level: string; msg: string }[] = [];
    const logger = { error: (_o: object, msg: string) => lines.push({ level: 'error', msg }), info: (_o: object, msg: string) => lines.push({ level: 'info', msg }) };
    const redis = { redisUrl: 'redis://shared:6379', redisPrefix: 'openalerts' };
    const a = new NodeRegistry(db.database.db, redis, logger);
    const b = new NodeRegistry(db.database.db, redis, logger);
    const lone = new NodeRegistry(db.database.db, { redisUrl: null, redisPrefix: 'openalerts' }, logger);
    try {
      await a.check();
      assert.equal((await b.check()).warning, null, 'same Redis and prefix: no warning');
      assert.equal(lines.length, 0);
      const { nodes, warning } = await lone.check();
      assert.equal(nodes, 3);
      assert.match(String(warning), /REDIS_URL is not set on this one/);
      assert.match((await a.check()).warning ?? '', /3 OpenAlerts nodes share this database but not all publish through this node's Redis/);
      await lone.check();
      assert.equal(lines.filter((l) => l.level === 'error' && /EVENTS ARE BEING LOST/.test(l.msg)).length, 2, 'each affected node logs once, not on every heartbeat');
      await lone.stop();
      assert.equal((await a.check()).warning, null);
      assert.ok(lines.some((l) => l.level === 'info' && /every live node now shares this broker/.test(l.msg)));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await db.drop();
    }
  });
});
