import { sql, type RawBuilder } from 'kysely';

/** A LIKE pattern for "contains `text`", lower-cased: `%`, `_` and `\` typed by a user match themselves. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `column like '%text%' escape '\'`, ignoring case: the column is compared through `lower()` unless
 * it is already stored lower-case (`storedLowerCase`). Written the same on SQLite and PostgreSQL,
 * which share no default LIKE escape. `column` is one of our own column names, never user input.
 */
export function containsText(column: string, text: string, opts: { storedLowerCase?: boolean } = {}): RawBuilder<boolean> {
  const target = opts.storedLowerCase ? sql.ref(column) : sql`lower(${sql.ref(column)})`;
  return sql<boolean>`${target} like ${containsPattern(text)} escape '\\'`;
}
