import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely';
import { dialectOf } from './dialect.js';
import { migrations } from './migrations/index.js';

export class MigrationError extends Error {}

/**
 * PostgreSQL: the schema migrations run in (the first of `search_path`). Kysely's Migrator, left
 * without one, looks for its bookkeeping tables in every schema of the database, so another
 * schema's `kysely_migration_lock` made it skip creating ours and then fail on the missing table.
 */
async function currentSchema(db: Kysely<any>): Promise<string | undefined> {
  if (dialectOf(db) !== 'postgres') return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: await currentSchema(db) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
  return results ?? [];
}
