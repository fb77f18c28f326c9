import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import type { AppOverrides } from '../src/app.js';
import { envToConfig, type Config } from '../src/config/config.js';
import { createDatabase, type Database, type Dialect } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAccount, type NewAccount } from '../src/modules/accounts/accounts.service.js';
import type { UserRow } from '../src/modules/accounts/accounts.table.js';
import { createApp } from '../src/modules/apps/apps.service.js';
import { ROOT, sourcesHash } from './process.js';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const IN_CI = Boolean(process.env.CI);

export function tempDir(prefix = 'openalerts-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function testConfig(env: Record<string, string> = {}): Readonly<Config> {
  return envToConfig({ DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env });
}

/** How long the probes below wait for a service to answer before calling it missing. */
const PROBE_TIMEOUT_MS = 10_000;

let pgReachable: Promise<boolean> | undefined;
/** PostgreSQL suites skip on a machine without it, but never in CI (CI=true makes them fail instead). */
export function postgresAvailable(): Promise<boolean> {
  pgReachable ??= (async () => {
    // Generous: a refused connection (no PostgreSQL here) fails at once whatever the timeout, and in
    // CI a loaded machine (two suites side by side) can take seconds to complete a loopback connect.
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (err) {
      if (IN_CI) throw new Error(`PostgreSQL at ${PG_URL} is required in CI: ${(err as Error).message}`);
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return pgReachable;
}

let redisReachable: Promise<boolean> | undefined;
/** Like postgresAvailable, for the Redis at TEST_REDIS_URL: skip without it, except in CI. */
export function redisAvailable(): Promise<boolean> {
  redisReachable ??= (async () => {
    // Loaded here: most test processes never talk to Redis.
    const { Redis } = await import('ioredis');
    const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // connect() rejects with the failure; without a listener ioredis would also print it as unhandled.
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return true;
    } catch (err) {
      if (IN_CI) throw new Error(`Redis at ${REDIS_URL} is required in CI: ${(err as Error).message}`);
      return false;
    } finally {
      client.disconnect();
    }
  })();
  return redisReachable;
}

/** One statement on the PostgreSQL test database from a client of its own (a schema made or dropped by hand). */
export async function postgresAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The dialects a contract suite runs on: SQLite always, PostgreSQL when reachable (always in CI). */
export async function dialects(): Promise<Dialect[]> {
  return (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestDatabase {
  database: Database;
  dialect: Dialect;
  /** For a server process sharing this database (DATABASE_URL plus a search_path for PostgreSQL). */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * A migrated SQLite file to copy: migrating a new file runs every migration's statements one by
 * one, each its own commit with an fsync (about 130 per database, a second or more on a loaded
 * disk), for a result that is the same every time. Built once per change of src/ (migrations may
 * import from anywhere in it) and shared by the test processes of this checkout.
 */
let sqliteTemplate: Promise<string> | undefined;
function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = path.join(ROOT, 'node_modules', '.cache', 'openalerts-tests');
    const file = path.join(dir, `migrated-${sourcesHash(['src'])}.sqlite`);
    if (fs.existsSync(file)) return file;
    fs.mkdirSync(dir, { recursive: true });
    const building = path.join(fs.mkdtempSync(path.join(dir, 'building-')), 'migrated.sqlite');
    const database = createDatabase({ dialect: 'sqlite', file: building });
    try {
      await migrateToLatest(database.db);
      // Everything into the main file, so that the file alone is the database.
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(database.db);
    } finally {
      await database.close();
    }
    // Atomic: another process copies either no template or a whole one.
    fs.renameSync(building, file);
    fs.rmSync(path.dirname(building), { recursive: true, force: true });
    return file;
  })();
  return sqliteTemplate;
}

/** A fresh, migrated database: a new SQLite file, or a new schema in the PostgreSQL `test` database. */
export async function openTestDatabase(dialect: Dialect = 'sqlite'): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const file = path.join(tempDir(), 'test.sqlite');
    fs.copyFileSync(await migratedSqliteTemplate(), file);
    const database = createDatabase({ dialect: 'sqlite', file });
    // Finds every migration applied (one read): the copy is of the current schema.
    assert.deepEqual(await migrateToLatest(database.db), [], 'the migrated template is up to date');
    return { database, dialect, env: { DATABASE_URL: `sqlite:${file}` }, drop: () => database.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const database = createDatabase({ dialect: 'postgres', url: PG_URL, schema });
  await migrateToLatest(database.db);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    database,
    dialect,
    env: { DATABASE_URL: url.toString() },
    async drop() {
      await database.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  config: Readonly<Config>;
  database: Database;
  /** Environment for a CLI or server process sharing this app's database and data directory. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The real app on a real database file (or PostgreSQL schema), for `app.inject` tests. */
export async function buildTestApp(options: { dialect?: Dialect; env?: Record<string, string>; overrides?: AppOverrides } = {}): Promise<TestApp> {
  const testDb = await openTestDatabase(options.dialect ?? 'sqlite');
  const config = testConfig(options.env);
  // Loaded here, not with this module: the app is most of what a test process loads, and a third
  // of the test files import this one for a database, a user or a probe without ever building it.
  const { buildApp } = await import('../src/app.js');
  const app = await buildApp(config, { logger: false, database: testDb.database, ...options.overrides });
  await app.ready();
  return {
    app,
    config,
    database: testDb.database,
    env: { ...testDb.env, DATA_DIR: config.dataDir },
    async close() {
      await app.close();
      await testDb.drop();
    },
  };
}

let counter = 0;
export async function makeUser(db: Database['db'], overrides: Partial<NewAccount> = {}): Promise<UserRow> {
  counter += 1;
  const tag = `${Date.now().toString(36)}${counter}`;
  return createAccount(db, { email: `streamer${tag}@example.test`, password: 'correct horse battery', name: `Streamer ${tag}`, ...overrides });
}

export async function makeApp(testApp: TestApp, ownerId: number, redirectUris = ['https://client.example.test/callback']) {
  return createApp(testApp.database.db, testApp.app.ctx.secrets.encryptionKey, { ownerId, name: 'Test client', redirectUris });
}

/** A valid access token for a user and client, issued through the real token store. */
export async function issueToken(testApp: TestApp, opts: { userId: number | null; clientId: number; scopes: string[] }): Promise<string> {
  const tokens = testApp.app.ctx.tokens;
  const db = testApp.database.db;
  const grantId = await tokens.createGrant(db, { clientId: opts.clientId, userId: opts.userId, scopes: opts.scopes, kind: opts.userId === null ? 'client_credentials' : 'authorization_code' });
  const issued = await tokens.issue(db, { grantId, clientId: opts.clientId, userId: opts.userId, scopes: opts.scopes }, false);
  return issued.accessToken;
}

/** Listens on a free port of 127.0.0.1; returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return address.replace('[::1]', '127.0.0.1');
}
