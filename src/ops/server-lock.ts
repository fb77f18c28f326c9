import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';

/** Another process holds the database: a running server, or a restore in progress. */
export class DatabaseInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseInUseError';
  }
}

export interface ServerLock {
  release(): void;
}

interface Holder {
  pid: number;
  hostname: string;
  startedAt: string;
  purpose: string;
}

const lockFile = (databaseFile: string): string => `${databaseFile}.server-lock`;
const holderFile = (databaseFile: string): string => `${databaseFile}.server-lock.json`;

function describeHolder(databaseFile: string): string {
  try {
    const holder = JSON.parse(fs.readFileSync(holderFile(databaseFile), 'utf8')) as Holder;
    return `${holder.purpose} (PID ${holder.pid} on ${holder.hostname}, since ${holder.startedAt})`;
  } catch {
    return 'another process';
  }
}

/**
 * One server per SQLite file. Two servers on one file would each publish only their own commits'
 * events promptly, keep separate rate limits and token caches, and fight over the write lock. The
 * lock is an exclusive SQLite lock on a file beside the database (`<db>.server-lock`), held for the
 * process's life: the operating system drops it when the process dies, however it dies, so no
 * stale PID can block a restart. The JSON beside it only names the holder for the error message.
 *
 * CLI commands that work beside a running server (user, app, donation, backup, export, import …)
 * never take it; `serve` and `restore` do.
 */
export function acquireServerLock(databaseFile: string, purpose: string): ServerLock {
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true });
  const lock = new SQLite(lockFile(databaseFile), { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('begin exclusive');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new DatabaseInUseError(`${databaseFile} is in use by ${describeHolder(databaseFile)}; stop it first (one server per SQLite file: to run several nodes use PostgreSQL and Redis).`);
    }
    throw err;
  }
  const holder: Holder = { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), purpose };
  fs.writeFileSync(holderFile(databaseFile), JSON.stringify(holder) + '\n');
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      fs.rmSync(holderFile(databaseFile), { force: true });
      lock.close();
    },
  };
}
