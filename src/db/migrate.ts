import { Migrator, type Kysely, type MigrationResult } from 'kysely';
import { migrations } from './migrations/index.js';

export class MigrationError extends Error {}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
  return results ?? [];
}
