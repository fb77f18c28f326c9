import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';
import { openTestDatabase, tempDir, type TestDatabase } from './helper.js';
import type { CliResult } from './process.js';

export interface CliDatabase {
  /** The database the CLI processes write to, for set-up and checks from the test itself. */
  db: Kysely<DB>;
  /** Environment for `runCli`: the same database, and a data directory of its own. */
  env: Record<string, string>;
}

/**
 * For files testing `openalerts` commands: a SQLite database opened before the file's tests and
 * dropped after them. Fields are filled in by the `before` hook.
 */
export function cliDatabase(): CliDatabase {
  let t: TestDatabase | undefined;
  const fixture = { env: {} } as CliDatabase;
  before(async () => {
    t = await openTestDatabase('sqlite');
    fixture.db = t.database.db;
    fixture.env = { DATA_DIR: tempDir(), ...t.env };
  });
  after(async () => t?.drop());
  return fixture;
}

/** A command's stdout as JSON, once it has exited 0 (otherwise the failure shows its stderr). */
export function cliJson(res: CliResult): any {
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}
