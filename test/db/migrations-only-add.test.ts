import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrations } from '../../src/db/migrations/index.js';
import { tempDir } from '../helper.js';

/** Table → column → whether an INSERT that does not name the column still works (nullable or defaulted). */
type Shape = Map<string, Map<string, boolean>>;

function shapeOf(file: Database.Database): Shape {
  const shape: Shape = new Map();
  const tables = file.prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`).pluck().all() as string[];
  for (const table of tables) {
    const columns = file.pragma(`table_info(${JSON.stringify(table)})`) as { name: string; notnull: number; dflt_value: unknown; pk: number }[];
    shape.set(table, new Map(columns.map((c) => [c.name, c.notnull === 0 || c.dflt_value !== null || c.pk > 0])));
  }
  return shape;
}

// docs/operations.md, "Upgrades and migrations": during a rolling upgrade a node of the previous
// version keeps working on a migrated database. It reads and writes the tables and columns it
// knows, and inserts rows without naming the columns it does not. So a migration may add tables,
// nullable or defaulted columns and indexes, and must never drop or rename a table or a column,
// nor add to an existing table a column that such an insert would leave without a value.
/**
 * Shipped before that promise was made (and so before any deployment ran several versions at
 * once); listed so that nothing new joins them.
 */
// 0008 renamed outbox.channel to channels, so both sides of the rename show.
const SHIPPED_BEFORE_ROLLING_UPGRADES = ['0008_outbox_events drops or renames outbox.channel', '0008_outbox_events adds outbox.channels NOT NULL without a default'];

test('every migration only adds: no table or column dropped, no required column added to an existing table', async () => {
  const file = new Database(path.join(tempDir(), 'migrations.sqlite'));
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: file }) });
  const breaking: string[] = [];
  try {
    let before = shapeOf(file);
    for (const [name, migration] of Object.entries(migrations)) {
      await migration.up(db);
      const after = shapeOf(file);
      for (const [table, columns] of before) {
        const now = after.get(table);
        if (!now) {
          breaking.push(`${name} drops or renames table ${table}`);
          continue;
        }
        for (const column of columns.keys()) if (!now.has(column)) breaking.push(`${name} drops or renames ${table}.${column}`);
        for (const [column, optional] of now) if (!columns.has(column) && !optional) breaking.push(`${name} adds ${table}.${column} NOT NULL without a default`);
      }
      before = after;
    }
  } finally {
    await db.destroy();
  }
  assert.deepEqual(breaking, SHIPPED_BEFORE_ROLLING_UPGRADES, 'a node of the previous version would fail on the migrated database');
});
