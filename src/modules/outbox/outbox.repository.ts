import { sql, type Kysely, type Selectable } from 'kysely';
import type { OutboxTable } from './outbox.table.js';
import type { DB } from '../../db/schema.js';
import { channelsOf, type EventType } from './events.js';

export interface NewEvent {
  type: EventType;
  /** The streamer whose channels receive it. */
  userId: number;
  /** The publication payload (spec resource + `reason`), encoded here once. */
  payload: unknown;
}

/**
 * Records a domain event. Call it with the transaction that makes the change, so the event exists
 * if and only if the change committed (DESIGN: transactional outbox).
 */
export async function enqueueEvent(tx: Kysely<DB>, event: NewEvent): Promise<void> {
  await tx
    .insertInto('outbox')
    .values({
      type: event.type,
      user_id: event.userId,
      channels: JSON.stringify(channelsOf(event.type, event.userId)),
      payload: JSON.stringify(event.payload),
      created_at: Date.now(),
    })
    .execute();
}

export interface OutboxRow {
  id: number;
  type: string;
  userId: number | null;
  channels: string[];
  /** Parsed, for readers that inspect events (tests, the CLI); the relay never parses it. */
  payload: any;
  publishedAt: number | null;
}

/** Events published (or to be published) on `channel`, oldest first. */
export async function eventsOnChannel(db: Kysely<DB>, channel: string): Promise<OutboxRow[]> {
  // The channel as it appears inside the JSON array, with LIKE's wildcards escaped.
  const needle = JSON.stringify(channel).replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await db
    .selectFrom('outbox')
    .selectAll()
    .where(sql<boolean>`channels like ${`%${needle}%`} escape '\\'`)
    .orderBy('id')
    .execute();
  return rows.map(toOutboxRow);
}

/** Every event, oldest first (tests and inspection). */
export async function allEvents(db: Kysely<DB>): Promise<OutboxRow[]> {
  return (await db.selectFrom('outbox').selectAll().orderBy('id').execute()).map(toOutboxRow);
}

function toOutboxRow(row: Selectable<OutboxTable>): OutboxRow {
  return { id: row.id, type: row.type, userId: row.user_id, channels: JSON.parse(row.channels), payload: JSON.parse(row.payload), publishedAt: row.published_at };
}

/** Rows not yet published and when the oldest was written (metrics: a growing age means stuck events). */
export async function outboxBacklog(db: Kysely<DB>): Promise<{ backlog: number; oldestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('backlog'), eb.fn.min('created_at').as('oldest')])
    .where('published_at', 'is', null)
    .executeTakeFirst();
  return { backlog: Number(row?.backlog ?? 0), oldestCreatedAt: row?.oldest == null ? null : Number(row.oldest) };
}
