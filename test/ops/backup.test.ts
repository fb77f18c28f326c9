import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openTestDatabase, postgresAvailable, tempDir } from '../helper.js';
import { runCli, startServerProcess } from '../process.js';
import { until } from '../wait.js';

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const noStack = (stderr: string) => assert.equal(stderr.includes('    at '), false, `no stack trace: ${stderr}`);

function rows(file: string, query: string): any[] {
  const db = new SQLite(file, { readonly: true });
  try {
    return db.prepare(query).all();
  } finally {
    db.close();
  }
}

describe('openalerts backup / restore (SQLite)', () => {
  test('backup while the server takes donations is consistent; restore is refused while it runs, then brings the copy back', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir };
    const database = path.join(dataDir, 'openalerts.sqlite');
    const server = await startServerProcess(env);
    const backupFile = path.join(tempDir(), 'copy.sqlite');
    try {
      assert.equal((await runCli(['user', 'create', '--email', 'a@example.test', '--password', 'a long passphrase', '--name', 'Anna'], env)).code, 0);
      // Donations keep landing (each with its outbox events, in one transaction) while the backup runs.
      const writing = runCli(['donation', 'simulate', '--user', 'anna', '--count', '60', '--interval', '5'], env);
      // The backup starts once the first donations are in (a fixed pause was sometimes shorter
      // than the command's start on a loaded machine: the backup then ran before any write).
      await until(() => rows(database, 'select count(*) as n from donations')[0].n >= 3, 20_000, 'the first donations');
      const backup = await runCli(['backup', backupFile], env);
      assert.equal(backup.code, 0, backup.stderr);
      const printed = JSON.parse(backup.stdout);
      assert.equal(printed.file, backupFile);
      assert.equal(printed.dialect, 'sqlite');
      assert.equal(printed.bytes, fs.statSync(backupFile).size);
      assert.match(backup.stderr, /secret\.key with this backup/);
      assert.equal((await writing).code, 0);

      assert.deepEqual(rows(backupFile, 'pragma integrity_check'), [{ integrity_check: 'ok' }]);
      assert.equal(fs.existsSync(`${backupFile}-wal`), false, 'one self-contained file');
      const donations = rows(backupFile, 'select id from donations').map((r) => r.id);
      const events = new Set(rows(backupFile, `select payload from outbox where channels like '%$alerts:donation_%'`).map((r) => JSON.parse(r.payload).id));
      for (const id of donations) assert.ok(events.has(id), `donation ${id} has its event in the same copy`);

      // A second backup to the same name is refused unless --force.
      const again = await runCli(['backup', backupFile], env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already exists; choose another name or pass --force/);
      noStack(again.stderr);

      const whileRunning = await runCli(['restore', backupFile], env);
      assert.equal(whileRunning.code, 1);
      assert.match(whileRunning.stderr, /in use by an OpenAlerts server \(PID \d+/);
      noStack(whileRunning.stderr);
    } finally {
      assert.equal(await server.stop(), 0);
    }

    // After the backup: one more account, which the restore must take away again.
    assert.equal((await runCli(['user', 'create', '--email', 'later@example.test', '--password', 'a long passphrase', '--name', 'Later'], env)).code, 0);
    const before = rows(database, 'select count(*) as n from users')[0].n;
    const restore = await runCli(['restore', backupFile], env);
    assert.equal(restore.code, 0, restore.stderr);
    const result = JSON.parse(restore.stdout);
    assert.equal(result.database, database);
    assert.ok(result.previous && fs.existsSync(result.previous), 'the replaced database is kept');
    assert.equal(rows(result.previous, 'select count(*) as n from users')[0].n, before);
    assert.deepEqual(rows(database, 'select email from users').map((r) => r.email), ['a@example.test']);

    // The restored database serves.
    const restarted = await startServerProcess(env);
    try {
      assert.equal((await fetch(`${restarted.url}/readyz`)).status, 200);
      assert.equal(JSON.parse((await runCli(['user', 'show', 'anna'], env)).stdout).email, 'a@example.test');
    } finally {
      await restarted.stop();
    }
  });

  test('restore refuses a damaged, truncated, foreign, newer or missing file and leaves the current database untouched', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir };
    const database = path.join(dataDir, 'openalerts.sqlite');
    assert.equal((await runCli(['user', 'create', '--email', 'keep@example.test', '--password', 'a long passphrase', '--name', 'Keep'], env)).code, 0);
    const dir = tempDir();
    const good = path.join(dir, 'good.sqlite');
    assert.equal((await runCli(['backup', good], env)).code, 0);
    // The live database as SQLite sees it: fold the WAL in so the file alone can be compared.
    const live = new SQLite(database);
    live.pragma('wal_checkpoint(TRUNCATE)');
    live.close();
    const fingerprint = sha(database);

    const garbage = path.join(dir, 'garbage.sqlite');
    fs.writeFileSync(garbage, Buffer.from('this is not a database at all, just some text '.repeat(200)));
    const truncated = path.join(dir, 'truncated.sqlite');
    fs.writeFileSync(truncated, fs.readFileSync(good).subarray(0, Math.floor(fs.statSync(good).size / 2)));
    const damaged = path.join(dir, 'damaged.sqlite');
    const bytes = Buffer.from(fs.readFileSync(good));
    bytes.fill(0xa5, 4096 + 200, 4096 * 3); // scribble over pages 2 and 3
    fs.writeFileSync(damaged, bytes);
    const foreign = path.join(dir, 'foreign.sqlite');
    const other = new SQLite(foreign);
    other.exec('create table notes (id integer primary key, body text); insert into notes (body) values (\'hello\')');
    other.close();
    const newer = path.join(dir, 'newer.sqlite');
    fs.copyFileSync(good, newer);
    const n = new SQLite(newer);
    n.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_future', new Date().toISOString());
    n.close();

    const cases: [string, RegExp][] = [
      [garbage, /not an SQLite database or is damaged|cannot be opened/],
      [truncated, /damaged|not an SQLite database|cannot be opened/],
      [damaged, /damaged|not an SQLite database/],
      [foreign, /not an OpenAlerts one \(no kysely_migration, users/],
      [newer, /written by a newer OpenAlerts \(migrations 9999_future\)/],
      [path.join(dir, 'missing.sqlite'), /does not exist/],
      [dir, /is not a file/],
    ];
    for (const [file, reason] of cases) {
      const res = await runCli(['restore', file], env);
      assert.equal(res.code, 1, `${path.basename(file)}: ${res.stdout}`);
      assert.match(res.stderr, reason, path.basename(file));
      assert.equal(res.stderr.trim().split('\n').length, 1, 'one line');
      noStack(res.stderr);
      assert.equal(sha(database), fingerprint, `${path.basename(file)}: the database is untouched`);
    }
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /before-restore|restoring/.test(f)), [], 'no copies or staging files left');
  });

  test('--help on both commands; a missing argument is a one-line usage error', async () => {
    for (const command of ['backup', 'restore']) {
      const help = await runCli([command, '--help'], { DATA_DIR: tempDir() });
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`Usage: openalerts ${command} \\[options\\] <file>`));
      const missing = await runCli([command], { DATA_DIR: tempDir() });
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /missing required argument 'file'/);
      noStack(missing.stderr);
    }
  });
});

describe('openalerts backup on PostgreSQL', { skip: !(await postgresAvailable()) && 'no PostgreSQL' }, () => {
  test('says to use pg_dump and exits 2; restore too', async () => {
    const db = await openTestDatabase('postgres');
    try {
      for (const command of ['backup', 'restore']) {
        const res = await runCli([command, path.join(tempDir(), 'x.dump')], { ...db.env, DATA_DIR: tempDir() });
        assert.equal(res.code, 2, res.stderr);
        assert.match(res.stderr, /On PostgreSQL, back up with pg_dump: pg_dump --format=custom/);
        noStack(res.stderr);
      }
    } finally {
      await db.drop();
    }
  });
});
