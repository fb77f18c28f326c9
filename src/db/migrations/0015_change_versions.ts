import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Versions that caches check instead of re-reading the data they cache (issue 16).
 *
 * donation_counters: per streamer, how many donations they have (`total`, so a page's meta needs no
 * `count(*)` over their rows) and a `version` that changes with every insert, update or delete of
 * one of their donations. Triggers keep both, so every writer — the server, the CLI, another node,
 * an import — bumps them in the writing transaction itself: a reader that sees the new version
 * also sees the write, on every node, with nothing published after the commit that could be lost.
 *
 * change_versions: one row per cached kind of rarely changing data; `merchant_auth` changes with
 * every write to `apps` or `merchants` (the credentials a signed Merchandise API call is checked
 * against).
 *
 * A whole-file restore or `pg_dump` copy carries the counters with the rows they count (pg_dump
 * creates triggers after loading data, so nothing is counted twice).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  await db.schema
    .createTable('donation_counters')
    .addColumn('user_id', 'bigint', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into donation_counters (user_id, total, version) select user_id, count(*), 1 from donations group by user_id`.execute(db);

  await db.schema
    .createTable('change_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into change_versions (name, version) values ('merchant_auth', 1)`.execute(db);

  if (dialect === 'postgres') {
    // Statement-level triggers with transition tables: a 500-row INSERT updates each streamer's
    // counter once, in user_id order (a fixed lock order: two bulk writers cannot deadlock on it).
    await sql`
      create function donation_counters_on_insert() returns trigger language plpgsql as $$
      begin
        insert into donation_counters as c (user_id, total, version)
          select user_id, count(*), 1 from inserted group by user_id order by user_id
          on conflict (user_id) do update set total = c.total + excluded.total, version = c.version + 1;
        return null;
      end $$`.execute(db);
    await sql`
      create function donation_counters_on_delete() returns trigger language plpgsql as $$
      begin
        update donation_counters c set total = c.total - d.n, version = c.version + 1
          from (select user_id, count(*) as n from deleted group by user_id) d where c.user_id = d.user_id;
        return null;
      end $$`.execute(db);
    await sql`
      create function donation_counters_on_update() returns trigger language plpgsql as $$
      begin
        update donation_counters c set total = c.total + m.delta, version = c.version + 1
          from (
            select user_id, sum(delta) as delta from (select user_id, -1 as delta from before union all select user_id, 1 from after) x group by user_id
          ) m where c.user_id = m.user_id;
        return null;
      end $$`.execute(db);
    await sql`create trigger donation_counters_insert after insert on donations referencing new table as inserted for each statement execute function donation_counters_on_insert()`.execute(db);
    await sql`create trigger donation_counters_delete after delete on donations referencing old table as deleted for each statement execute function donation_counters_on_delete()`.execute(db);
    await sql`create trigger donation_counters_update after update on donations referencing old table as before new table as after for each statement execute function donation_counters_on_update()`.execute(db);
    await sql`
      create function merchant_auth_changed() returns trigger language plpgsql as $$
      begin
        update change_versions set version = version + 1 where name = 'merchant_auth';
        return null;
      end $$`.execute(db);
    await sql`create trigger merchant_auth_apps after insert or update or delete on apps for each statement execute function merchant_auth_changed()`.execute(db);
    await sql`create trigger merchant_auth_merchants after insert or update or delete on merchants for each statement execute function merchant_auth_changed()`.execute(db);
    return;
  }

  // SQLite has row-level triggers only. Its writes are serialized anyway, so there is no lock order
  // to keep. (`where true` keeps the parser from reading ON CONFLICT as a join constraint.)
  await sql`
    create trigger donation_counters_insert after insert on donations begin
      insert into donation_counters (user_id, total, version) select new.user_id, 1, 1 where true
        on conflict (user_id) do update set total = total + 1, version = version + 1;
    end`.execute(db);
  await sql`
    create trigger donation_counters_delete after delete on donations begin
      update donation_counters set total = total - 1, version = version + 1 where user_id = old.user_id;
    end`.execute(db);
  await sql`
    create trigger donation_counters_update after update on donations begin
      update donation_counters set total = total - 1, version = version + 1 where user_id = old.user_id and old.user_id <> new.user_id;
      update donation_counters set total = total + 1 where user_id = new.user_id and old.user_id <> new.user_id;
      update donation_counters set version = version + 1 where user_id = new.user_id;
    end`.execute(db);
  for (const table of ['apps', 'merchants']) {
    for (const event of ['insert', 'update', 'delete']) {
      await sql`
        create trigger ${sql.raw(`merchant_auth_${table}_${event}`)} after ${sql.raw(event)} on ${sql.table(table)} begin
          update change_versions set version = version + 1 where name = 'merchant_auth';
        end`.execute(db);
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  if (dialect === 'postgres') {
    await sql`drop trigger merchant_auth_apps on apps`.execute(db);
    await sql`drop trigger merchant_auth_merchants on merchants`.execute(db);
    await sql`drop function merchant_auth_changed()`.execute(db);
    for (const event of ['insert', 'delete', 'update']) {
      await sql`drop trigger ${sql.raw(`donation_counters_${event}`)} on donations`.execute(db);
      await sql`drop function ${sql.raw(`donation_counters_on_${event}`)}()`.execute(db);
    }
  } else {
    for (const event of ['insert', 'delete', 'update']) await sql`drop trigger ${sql.raw(`donation_counters_${event}`)}`.execute(db);
    for (const table of ['apps', 'merchants']) for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.raw(`merchant_auth_${table}_${event}`)}`.execute(db);
  }
  await db.schema.dropTable('change_versions').execute();
  await db.schema.dropTable('donation_counters').execute();
}
