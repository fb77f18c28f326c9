import path from 'node:path';
import { createDatabase, type Database } from '../src/db/database.js';
import { openTestDatabase, postgresAvailable, REDIS_URL, tempDir } from './helper.js';
import { cleanRedis, redisOrSkip, uniquePrefix } from './realtime/helpers.js';

/**
 * The storage a real `openalerts serve` process runs on (test/process.ts starts it with `env`), and
 * this test process's own connection to the same database, for writing beside the server and
 * checking what it stored. For tests that kill and restart servers.
 */
export interface ServerBackend {
  env: Record<string, string>;
  dataDir: string;
  database(): Database;
  cleanup(): Promise<void>;
}

/** SQLite under a fresh DATA_DIR with the in-memory broker (the default set-up). */
export async function sqliteBackend(): Promise<ServerBackend> {
  const dataDir = tempDir();
  let database: Database | null = null;
  return {
    env: { DATA_DIR: dataDir },
    dataDir,
    database: () => (database ??= createDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'openalerts.sqlite') })),
    cleanup: async () => database?.close(),
  };
}

/**
 * A fresh PostgreSQL schema, with Redis under its own key prefix when `redis` is set; null when
 * either is unreachable (callers skip, and helper.ts makes that fail in CI).
 */
export async function postgresBackend(opts: { redis: boolean; name: string }): Promise<ServerBackend | null> {
  if (!(await postgresAvailable())) return null;
  const admin = opts.redis ? await redisOrSkip() : null;
  if (opts.redis && !admin) return null;
  const t = await openTestDatabase('postgres');
  const dataDir = tempDir();
  const prefix = uniquePrefix(opts.name);
  return {
    env: { ...t.env, DATA_DIR: dataDir, ...(opts.redis ? { REDIS_URL, REDIS_PREFIX: prefix } : {}) },
    dataDir,
    database: () => t.database,
    cleanup: async () => {
      await t.drop();
      if (admin) {
        await cleanRedis(admin, prefix);
        admin.disconnect();
      }
    },
  };
}
