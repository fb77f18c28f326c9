import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely, type MigrationResult, type MigrationResultSet } from 'kysely';
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

/** PostgreSQL errors of a catalog read racing a concurrent DROP: schema, table or column gone. */
function isConcurrentDdl(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '3F000' || code === '42P01' || code === '42703';
}

function migratorFor(db: Kysely<any>, schema: string | undefined): Migrator {
  // Migration numbers are handed out ahead and land in any order (0020 before 0017): a database
  // that already ran a higher number still runs a lower one that lands later.
  return new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema, allowUnorderedMigrations: true });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs one Migrator call. Before it migrates, Kysely looks for its bookkeeping tables by
 * introspecting every table of the database; on PostgreSQL that catalog query fails when another
 * session drops a schema or table meanwhile (another application's DDL on a shared database; our
 * test suites drop their schemas all the time). Nothing was applied then (no results), so it looks
 * again, a little later each time, for as long as a burst of DDL plausibly lasts.
 */
async function migrate(db: Kysely<any>, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<MigrationResult[]> {
  // PostgreSQL: on one connection without DATABASE_STATEMENT_TIMEOUT_MS — a migration may rewrite
  // a large table, and a node starting while another migrates waits for its lock.
  if (dialectOf(db) !== 'postgres') return migrateOn(db, run);
  return db.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    try {
      return await migrateOn(conn, run);
    } finally {
      // Back to the connection's own setting for whoever uses it next.
      await sql`reset statement_timeout`.execute(conn).catch(() => {});
    }
  });
}

async function migrateOn(db: Kysely<any>, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<MigrationResult[]> {
  const migrator = migratorFor(db, await currentSchema(db));
  let { error, results } = await run(migrator);
  for (let attempt = 1; error && !results && isConcurrentDdl(error) && attempt < 10; attempt++) {
    await sleep(20 * attempt);
    ({ error, results } = await run(migrator));
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
  return results ?? [];
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResult[]> {
  // Every start after the first finds nothing to do: one read of the applied names says so,
  // without the Migrator's introspection of every table, its lock and its bookkeeping. A migration
  // is recorded only once it has run, so "all recorded" is "all done"; anything else (pending,
  // unknown to this version, a failed read) goes to the Migrator, which applies or refuses.
  const status = await migrationStatus(db).catch(() => null);
  if (status && status.pending.length === 0 && status.unknown.length === 0) return [];
  return migrate(db, (migrator) => migrator.migrateToLatest());
}

/** Brings the schema up or down to one migration (tests of a migration's data changes start from the one before it). */
export function migrateTo(db: Kysely<any>, name: string): Promise<MigrationResult[]> {
  return migrate(db, (migrator) => migrator.migrateTo(name));
}

export interface MigrationStatus {
  /** Migrations of this version not applied to the database yet. */
  pending: string[];
  /** Applied migrations this version does not know: a newer version migrated the database. */
  unknown: string[];
}

/** How the database's schema compares with this version's migrations (/readyz, restore checks). */
export async function migrationStatus(db: Kysely<any>): Promise<MigrationStatus> {
  const schema = await currentSchema(db);
  const table = schema ? db.withSchema(schema) : db;
  let applied: string[];
  try {
    applied = (await table.selectFrom(DEFAULT_MIGRATION_TABLE).select('name').execute()).map((r: { name: string }) => r.name);
  } catch (err) {
    if (await hasMigrationTable(db, schema)) throw err;
    applied = []; // nothing was ever migrated here
  }
  const known = Object.keys(migrations);
  return { pending: known.filter((name) => !applied.includes(name)), unknown: applied.filter((name) => !known.includes(name)) };
}

async function hasMigrationTable(db: Kysely<any>, schema: string | undefined): Promise<boolean> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  return tables.some((t) => t.name === DEFAULT_MIGRATION_TABLE && (schema === undefined || t.schema === schema));
}
