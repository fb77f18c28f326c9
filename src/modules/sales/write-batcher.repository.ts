import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * The statements of the group commit (write-batcher.ts): one savepoint per job inside the shared
 * transaction, so a failing job is undone alone.
 */
export async function beginJob(tx: Kysely<DB>): Promise<void> {
  await sql`savepoint job`.execute(tx);
}

export async function keepJob(tx: Kysely<DB>): Promise<void> {
  await sql`release savepoint job`.execute(tx);
}

export async function undoJob(tx: Kysely<DB>): Promise<void> {
  await sql`rollback to savepoint job`.execute(tx);
  await sql`release savepoint job`.execute(tx);
}
