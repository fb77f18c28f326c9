import type { CompiledQuery, Kysely, QueryResult } from 'kysely';

/**
 * PostgreSQL parses, analyses and plans an unnamed statement every time it runs; a named
 * (prepared) one once per connection, and then reuses its plan. For the few statements a busy
 * path runs over and over — with the same text every time, values as parameters — that is most of
 * the database's CPU per statement (bench/README.md, merchandise sales). They opt in here by their
 * SQL text; every other statement stays unnamed (texts that vary, such as IN-lists, would pile up
 * as prepared statements on every pooled connection).
 *
 * Only for statements whose plan cannot go bad as tables grow: PostgreSQL may settle on a generic
 * plan (one for any parameters) and keep it until the tables are next analysed, so a plan made
 * while a table was nearly empty must not pick an access path that only suits an empty table.
 *
 * The pool's query wrapper (database.ts) sends an opted-in text with its name; pg parses it once
 * per connection. SQLite caches every prepared statement anyway (database.ts).
 */
const names = new Map<string, string>();
// A bound, in case a caller's text does vary after all: past it, new texts run unnamed.
const MAX_NAMES = 64;

/** The statement name of `text` if it was opted in (`executeNamed`), else undefined. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}

/**
 * Runs a compiled query (`builder.compile()`, or `sql\`…\`.compile(db)`), as a named prepared
 * statement on PostgreSQL. Its text must be the same on every call: only its parameters vary.
 */
export function executeNamed<R>(db: Kysely<any>, compiled: CompiledQuery<R>): Promise<QueryResult<R>> {
  return db.executeQuery(prepared(compiled));
}

/** Opts `compiled`'s text in (see executeNamed), for a statement built ahead and run later. */
export function prepared<R>(compiled: CompiledQuery<R>): CompiledQuery<R> {
  if (names.size < MAX_NAMES && !names.has(compiled.sql)) names.set(compiled.sql, `openalerts_${names.size + 1}`);
  return compiled;
}
