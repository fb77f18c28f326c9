import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { BackupError } from '../db/backup-error.js';
import type { Database } from '../db/database.js';

export interface OpsCliKit {
  config(): Readonly<Config>;
  print(value: unknown): void;
  withDatabase<T>(fn: (database: Database, cfg: Readonly<Config>) => Promise<T>): Promise<T>;
}

const PG_DUMP =
  'On PostgreSQL, back up with pg_dump: pg_dump --format=custom --file=<file> "$DATABASE_URL" ' +
  '(restore into an empty database with pg_restore --no-owner --dbname="$DATABASE_URL" <file>), and keep SECRET_KEY with it.';

/**
 * `openalerts backup <file>` and `openalerts restore <file>` (SQLite); `openalerts export` and
 * `import` (one streamer, either dialect). Backup runs beside a server;
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

  program
    .command('export')
    .description('Write one streamer (profile, their applications, donations, goals, polls, widget settings) to a JSON file for `openalerts import` on another instance.')
    .requiredOption('--user <user>', 'the streamer: user id, e-mail or code')
    .argument('<file>', 'where to write the export (must not exist yet)')
    .option('--force', 'replace <file> if it exists')
    .action((file: string, opts: { user: string; force?: boolean }) =>
      kit.withDatabase(async ({ db }, cfg) => {
        const target = path.resolve(file);
        if (fs.existsSync(target) && !opts.force) throw new BackupError(`${target} already exists; choose another name or pass --force to replace it.`);
        if (!fs.existsSync(path.dirname(target))) throw new BackupError(`The folder ${path.dirname(target)} does not exist.`);
        const [{ exportStreamer }, { loadSecrets }] = await Promise.all([import('./streamer-transfer.js'), import('../config/secrets.js')]);
        const data = await exportStreamer(db, loadSecrets(cfg).encryptionKey, opts.user);
        // Application secrets and the widget token are in it, in clear: readable by the owner only.
        fs.writeFileSync(target, JSON.stringify(data, null, 1) + '\n', { mode: 0o600 });
        fs.chmodSync(target, 0o600);
        kit.print({ file: target, user_id: data.user.id, apps: data.apps.length, donations: data.donations.length, goals: data.goals.length, polls: data.polls.length, alert_variations: data.alert_variations.length });
        process.stderr.write('The export holds application secrets and the widget token in clear: keep it private, delete it once imported.\n');
      }),
    );

  program
    .command('import')
    .description('Create the streamer of an `openalerts export` file here (new ids; prints the new user id and client_ids). All or nothing.')
    .argument('<file>', 'an export file')
    .action((file: string) =>
      kit.withDatabase(async ({ db }, cfg) => {
        let doc: unknown;
        try {
          doc = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch (err) {
          const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a folder' : 'is not JSON';
          throw new BackupError(`${path.resolve(file)} ${reason}.`);
        }
        const [{ importStreamer }, { loadSecrets }] = await Promise.all([import('./streamer-transfer.js'), import('../config/secrets.js')]);
        kit.print(await importStreamer(db, loadSecrets(cfg).encryptionKey, doc));
      }),
    );
}
