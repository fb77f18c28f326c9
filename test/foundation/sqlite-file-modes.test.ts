import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { tempDir } from '../helper.js';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

test('the SQLite database and its -wal and -shm files are created 0600, like secret.key', async () => {
  const previous = process.umask(0o022); // the usual umask, which leaves new files world-readable
  try {
    const file = path.join(tempDir(), 'fresh', 'openalerts.sqlite');
    const database = createDatabase({ dialect: 'sqlite', file });
    try {
      await migrateToLatest(database.db); // writes, so the WAL and shared-memory files exist
      for (const each of [file, `${file}-wal`, `${file}-shm`]) {
        assert.ok(fs.existsSync(each), each);
        assert.equal(mode(each).toString(8), '600', each);
      }
      assert.equal(mode(path.dirname(file)).toString(8), '700', 'a data directory we create is ours only');
    } finally {
      await database.close();
    }
  } finally {
    process.umask(previous);
  }
});

test('a database file left world-readable by an older install is narrowed to 0600 on open', async () => {
  const file = path.join(tempDir(), 'old.sqlite');
  fs.writeFileSync(file, '', { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  const database = createDatabase({ dialect: 'sqlite', file });
  try {
    await migrateToLatest(database.db);
    assert.equal(mode(file).toString(8), '600');
    assert.equal(mode(`${file}-wal`).toString(8), '600');
  } finally {
    await database.close();
  }
});
