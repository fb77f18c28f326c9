import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely';
import type { Dialect } from './database.js';

/** Migrations receive a bare Kysely; the adapter tells which SQL dialect is underneath. */
export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Auto-increment integer primary key. SQLite needs exactly `integer primary key autoincrement`
 * (ids never reused, even after deletes); PostgreSQL gets a bigint identity.
 */
export function withId<T extends string>(table: CreateTableBuilder<T, any>, dialect: Dialect): CreateTableBuilder<T, any> {
  return dialect === 'sqlite'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity());
}

/** Is this error a unique-constraint violation (either dialect)? Optionally on a given column. */
export function isUniqueViolation(err: unknown, column?: string): boolean {
  const e = err as { code?: string; message?: string; detail?: string; constraint?: string };
  const sqlite = e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  const postgres = e.code === '23505';
  if (!sqlite && !postgres) return false;
  if (!column) return true;
  const text = `${e.message ?? ''} ${e.detail ?? ''} ${e.constraint ?? ''}`;
  return text.includes(column);
}
