import type { Kysely } from 'kysely';
import { releaseSavepoint, rollbackToSavepoint, savepoint } from '../../db/database.js';
import type { DB } from '../../db/schema.js';

/**
 * The statements of the group commit (write-batcher.ts): one savepoint per job inside the shared
 * transaction, so a failing job is undone alone — its outbox rows' commit notes with it.
 */
export async function beginJob(tx: Kysely<DB>): Promise<void> {
  await savepoint(tx, 'job');
}

export async function keepJob(tx: Kysely<DB>): Promise<void> {
  await releaseSavepoint(tx, 'job');
}

export async function undoJob(tx: Kysely<DB>): Promise<void> {
  await rollbackToSavepoint(tx, 'job');
  await releaseSavepoint(tx, 'job');
}
