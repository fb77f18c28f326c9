import { sql, type Kysely } from 'kysely';
import { createDatabase, type Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/schema.js';
import { upsertRate } from '../../src/modules/currencies/currencies.repository.js';
import type { TestDatabase } from '../helper.js';
import { allEvents, eventsOnChannel, type OutboxRow } from '../../src/modules/outbox/outbox.repository.js';

/** Round rates, so expected conversions are easy to check by hand. */
export async function setTestRates(db: Kysely<DB>): Promise<void> {
  for (const [currency, perUsd] of Object.entries({ EUR: 0.8, RUB: 90, KZT: 450, BRL: 5, TRY: 30 })) await upsertRate(db, currency, perUsd, '2030-01-01');
}

/** Outbox events (oldest first), optionally of one channel, with their payloads parsed. */
export async function outbox(db: Kysely<DB>, channel?: string): Promise<OutboxRow[]> {
  return channel ? eventsOnChannel(db, channel) : allEvents(db);
}

export async function count(db: Kysely<DB>, table: 'donations' | 'outbox' | 'goals' | 'polls' | 'poll_options'): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Makes inserting a donation from a donor named "boom" fail inside the database, after the
 * donation's goal and poll updates ran in the same transaction: proof they roll back together.
 */
export async function failDonationsNamedBoom(t: TestDatabase): Promise<void> {
  const db = t.database.db;
  if (t.dialect === 'sqlite') {
    await sql`create trigger donations_boom before insert on donations when new.username = 'boom' begin select raise(abort, 'boom'); end`.execute(db);
  } else {
    await sql`create function donations_boom() returns trigger language plpgsql as $$ begin if new.username = 'boom' then raise exception 'boom'; end if; return new; end $$`.execute(db);
    await sql`create trigger donations_boom before insert on donations for each row execute function donations_boom()`.execute(db);
  }
}

/**
 * Another node's connection pool to the same PostgreSQL database, for tests that hold a row lock in
 * one transaction while the other waits. Concurrency tests on both dialects use otherProcess()
 * (test/other-process.ts) instead: on SQLite only another process is an honest second connection.
 */
export function secondPool(t: TestDatabase): Database {
  if (t.dialect !== 'postgres') throw new Error('secondPool is PostgreSQL-only; use otherProcess() for SQLite');
  return createDatabase({ dialect: 'postgres', url: t.env.DATABASE_URL! });
}

/** A date-time string `days` from now, for goals that must not expire during a test. */
export function daysFromNow(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
}

/** Moves a goal's end into the past, as if time had passed (validation refuses past dates). */
export async function backdateGoal(db: Kysely<DB>, id: number, expiresAt: number): Promise<void> {
  await db.updateTable('goals').set({ expires_at: expiresAt }).where('id', '=', id).execute();
}
