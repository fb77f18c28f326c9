import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { BackupError } from '../db/backup-error.js';

export interface OpsCliKit {
  config(): Readonly<Config>;
  print(value: unknown): void;
}

const PG_DUMP =
  'On PostgreSQL, back up with pg_dump: pg_dump --format=custom --file=<file> "$DATABASE_URL" ' +
  '(restore into an empty database with pg_restore --no-owner --dbname="$DATABASE_URL" <file>), and keep SECRET_KEY with it.';

/**
 * `openalerts backup <file>` and `openalerts restore <file>` (SQLite). Backup runs beside a server;
 * restore refuses to while a server holds the database. Both load their code only when run.
 */
export function registerBackupCommands(program: Command, kit: OpsCliKit): void {
  program
    .command('backup')
    .description('SQLite: write a consistent copy of the database to <file>, also while the server runs. PostgreSQL: explains pg_dump and exits 2.')
    .argument('<file>', 'where to write the copy (must not exist yet)')
    .option('--force', 'replace <file> if it exists')
    .action(async (file: string, opts: { force?: boolean }) => {
      const cfg = kit.config();
      if (cfg.database.dialect !== 'sqlite') throw new BackupError(PG_DUMP, 2);
      const { backupSqlite } = await import('../db/backup.js');
      kit.print({ ...(await backupSqlite(cfg.database.file, file, opts)), dialect: 'sqlite' });
      process.stderr.write(`Keep ${cfg.secretKey ? 'SECRET_KEY' : `${cfg.dataDir}/secret.key`} with this backup: application secrets and widget tokens in it are sealed with that key.\n`);
    });

  program
    .command('restore')
    .description('SQLite: replace the database with a backup made by `openalerts backup`. Refused while a server runs; the current database is kept beside it.')
    .argument('<file>', 'a backup file')
    .action(async (file: string) => {
      const cfg = kit.config();
      if (cfg.database.dialect !== 'sqlite') throw new BackupError(PG_DUMP, 2);
      const [{ restoreSqlite }, { acquireServerLock }] = await Promise.all([import('../db/backup.js'), import('./server-lock.js')]);
      const lock = acquireServerLock(cfg.database.file, 'openalerts restore');
      try {
        kit.print(await restoreSqlite(cfg.database.file, file));
      } finally {
        lock.release();
      }
    });
}
