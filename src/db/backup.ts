import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { migrations } from './migrations/index.js';

import { BackupError } from './backup-error.js';

export { BackupError };

const MIGRATION_TABLE = 'kysely_migration';
/** Tables every OpenAlerts database has had since its first migration. */
const CORE_TABLES = ['users', 'apps', 'donations', 'outbox', 'currency_rates'];

export interface BackupInfo {
  file: string;
  bytes: number;
  /** The newest migration the copy carries. */
  migration: string;
}

function sidecars(file: string): string[] {
  return [`${file}-wal`, `${file}-shm`, `${file}-journal`];
}

/**
 * Checks that `file` is an intact SQLite database written by OpenAlerts and not by a newer version;
 * returns its newest migration. Opens it read-only and never changes it.
 */
export function inspectBackup(file: string): { migration: string } {
  if (!fs.existsSync(file)) throw new BackupError(`${file} does not exist.`);
  if (!fs.statSync(file).isFile()) throw new BackupError(`${file} is not a file.`);
  let sqlite: SQLite.Database;
  try {
    sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError(`${file} cannot be opened as a database (${(err as Error).message}).`);
  }
  try {
    let check: string[];
    try {
      check = (sqlite.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    } catch (err) {
      throw new BackupError(`${file} is not an SQLite database or is damaged (${(err as Error).message}).`);
    }
    if (check.length !== 1 || check[0] !== 'ok') {
      const problems = check.flatMap((row) => row.split('\n')).filter((line) => line.trim() && !line.startsWith('***'));
      throw new BackupError(`${file} is damaged (${problems.length} problem${problems.length === 1 ? '' : 's'}, first: ${problems[0] ?? 'unknown'}).`);
    }
    const tables = new Set((sqlite.prepare(`select name from sqlite_master where type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    if (!tables.has(MIGRATION_TABLE) || CORE_TABLES.some((t) => !tables.has(t))) {
      throw new BackupError(`${file} is an SQLite database but not an OpenAlerts one (no ${[MIGRATION_TABLE, ...CORE_TABLES].filter((t) => !tables.has(t)).join(', ')} table).`);
    }
    const applied = (sqlite.prepare(`select name from ${MIGRATION_TABLE} order by name`).all() as { name: string }[]).map((r) => r.name);
    const unknown = applied.filter((name) => !(name in migrations));
    if (unknown.length) throw new BackupError(`${file} was written by a newer OpenAlerts (migrations ${unknown.join(', ')}); restore it with that version.`);
    if (applied.length === 0) throw new BackupError(`${file} is an empty OpenAlerts database (no migration applied).`);
    return { migration: applied[applied.length - 1]! };
  } finally {
    sqlite.close();
  }
}

/**
 * A consistent copy of the live SQLite database through SQLite's online backup API, safe while a
 * server writes (it copies a single point in time, restarting if a write lands mid-copy). Written
 * to a temporary name, checked, then renamed into place, so `dest` is never a half-written file.
 */
export async function backupSqlite(databaseFile: string, dest: string, opts: { force?: boolean } = {}): Promise<BackupInfo> {
  if (!fs.existsSync(databaseFile)) throw new BackupError(`There is no database at ${databaseFile} yet (start the server or run \`openalerts migrate\` first).`);
  const target = path.resolve(dest);
  if (target === path.resolve(databaseFile)) throw new BackupError('The backup file must not be the database itself.');
  if (fs.existsSync(target) && !opts.force) throw new BackupError(`${target} already exists; choose another name or pass --force to replace it.`);
  const dir = path.dirname(target);
  if (!fs.existsSync(dir)) throw new BackupError(`The folder ${dir} does not exist.`);
  const partial = `${target}.partial-${process.pid}`;
  const source = new SQLite(databaseFile, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    await source.backup(partial);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw new BackupError(`The backup failed: ${(err as Error).message}.`);
  } finally {
    source.close();
  }
  try {
    // The copy keeps the source's WAL mode; make it one self-contained file.
    const copy = new SQLite(partial);
    copy.pragma('journal_mode = DELETE');
    copy.close();
    const { migration } = inspectBackup(partial);
    fs.renameSync(partial, target);
    return { file: target, bytes: fs.statSync(target).size, migration };
  } catch (err) {
    for (const f of [partial, ...sidecars(partial)]) fs.rmSync(f, { force: true });
    throw err;
  }
}

/**
 * Replaces the database with a backup. The caller holds the server lock (no server runs). The
 * backup is checked before anything is touched; the current database is first saved beside it
 * (`<db>.before-restore-<time>`), then the checked copy is renamed over it in one step.
 */
export async function restoreSqlite(databaseFile: string, backupFile: string): Promise<{ restored: string; database: string; migration: string; previous: string | null }> {
  const source = path.resolve(backupFile);
  if (source === path.resolve(databaseFile)) throw new BackupError('The backup file is the database itself.');
  const { migration } = inspectBackup(source);

  fs.mkdirSync(path.dirname(databaseFile), { recursive: true });
  const staged = `${databaseFile}.restoring-${process.pid}`;
  try {
    fs.copyFileSync(source, staged);
    inspectBackup(staged);
  } catch (err) {
    fs.rmSync(staged, { force: true });
    throw err;
  }

  let previous: string | null = null;
  if (fs.existsSync(databaseFile)) {
    previous = `${databaseFile}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const current = new SQLite(databaseFile, { fileMustExist: true });
    try {
      current.pragma('busy_timeout = 5000');
      await current.backup(previous);
      // Everything committed is now in the main file; the WAL left behind would not belong to the new one.
      current.pragma('wal_checkpoint(TRUNCATE)');
    } catch (err) {
      fs.rmSync(staged, { force: true });
      throw new BackupError(`Could not save the current database before replacing it (${(err as Error).message}); nothing was changed. Move ${databaseFile} away by hand and run restore again.`);
    } finally {
      current.close();
    }
  }
  for (const f of sidecars(databaseFile)) fs.rmSync(f, { force: true });
  fs.renameSync(staged, databaseFile);
  return { restored: source, database: databaseFile, migration, previous };
}
