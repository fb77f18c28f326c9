import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { OutboxTable } from './outbox.table.js';
import { noteOnCommit, postgresLiteral, type NowStatements } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { channelsOf, type EventType } from './events.js';

export interface NewEvent {
  type: EventType;
  /** The streamer whose channels receive it. */
  userId: number;
  /** The publication payload (spec resource + `reason`), encoded here once. */
  payload: unknown;
  /** Publish no earlier than this (ms): an alert delay kept in the row, so it survives restarts. */
  notBefore?: number;
}

/**
 * An outbox row as the transaction that wrote it knows it: left for the commit listeners
 * (`noteOnCommit`), so the relay publishes it once the transaction is durable without reading it
 * back (outbox.relay.ts).
 */
export class WrittenEvent implements PendingEvent {
  constructor(
    readonly id: number,
    readonly type: string,
    readonly channels: string,
    readonly payload: string,
    readonly created_at: number,
    readonly not_before: number | null,
    /** PostgreSQL: the relay the writing statement claimed it for (outbox/handover.ts); null: not claimed. */
    readonly claimed_by: string | null = null,
  ) {}
}

// SQL text once per dialect: every donation writes one, and building the query cost more than running it.
const INSERT_EVENT = {
  sqlite: 'insert into outbox (type, user_id, channels, payload, created_at, not_before) values (?, ?, ?, ?, ?, ?) returning id',
  postgres: 'insert into outbox (type, user_id, channels, payload, created_at, not_before) values ($1, $2, $3, $4, $5, $6) returning id',
};

/**
 * Records a domain event. Call it with the transaction that makes the change, so the event exists
 * if and only if the change committed (architecture.md convention 1: transactional outbox); the commit hands the row to
 * the relay.
 */
export async function enqueueEvent(tx: Kysely<DB>, event: NewEvent): Promise<void> {
  const row = eventRow(event);
  const { rows } = await tx.executeQuery<{ id: number }>(CompiledQuery.raw(INSERT_EVENT[dialectOf(tx)], row.parameters));
  await noteOnCommit(tx, row.written(Number(rows[0]!.id)));
}

/** `enqueueEvent` on SQLite, as a statement of `transactNow`: the row goes to the relay the same way. */
export function enqueueEventNow(tx: NowStatements, event: NewEvent): void {
  const row = eventRow(event);
  tx.note(row.written(tx.get<{ id: number }>(INSERT_EVENT.sqlite, row.parameters)!.id));
}

/** The row `event` is written as: INSERT_EVENT's parameters, and the commit's note once its id is known. */
function eventRow(event: NewEvent): { parameters: unknown[]; written: (id: number) => WrittenEvent } {
  const channels = JSON.stringify(channelsOf(event.type, event.userId));
  const payload = JSON.stringify(event.payload);
  const at = Date.now();
  const notBefore = event.notBefore ?? null;
  return { parameters: [event.type, event.userId, channels, payload, at, notBefore], written: (id) => new WrittenEvent(id, event.type, channels, payload, at, notBefore) };
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

/**
 * Rows due and not yet published, and when the oldest was written (metrics: a growing age means
 * stuck events). A delayed alert waiting for its time is not backlog.
 */
export async function outboxBacklog(db: Kysely<DB>, now = Date.now()): Promise<{ backlog: number; oldestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('backlog'), eb.fn.min('created_at').as('oldest')])
    .where('published_at', 'is', null)
    .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
    .executeTakeFirst();
  return { backlog: Number(row?.backlog ?? 0), oldestCreatedAt: row?.oldest == null ? null : Number(row.oldest) };
}

/** A published event's place in each of its channels (offsets in `channels` order; 0: no history). */
export interface PublishedPositions {
  id: number;
  offsets: number[];
}

/** A channel's stream top after a batch: the in-memory broker restores its epoch and offset from it. */
export interface StreamTop {
  channel: string;
  epoch: string;
  offset: number;
}

/**
 * SQLite: marks events published with the offsets their channels gave them, and moves the stream
 * tops (PostgreSQL: `endDrainRound`).
 */
export async function recordPublished(db: Kysely<DB>, events: PublishedPositions[], tops: StreamTop[], now: number): Promise<void> {
  if (events.length === 0) return;
  // One prepared statement per row on the held connection: no round trips on SQLite. Written as
  // SQL text (here and below): building the query each time cost more than running it.
  for (const e of events) await sql`update outbox set published_at = ${now}, offsets = ${JSON.stringify(e.offsets)} where id = ${e.id}`.execute(db);
  if (tops.length === 0) return;
  const values = sql.join(tops.map((t) => sql`(${t.channel}, ${t.epoch}, ${t.offset}, ${now})`));
  await sql`insert into channel_streams (channel, epoch, top_offset, updated_at) values ${values} ${sql.raw(TOPS_CONFLICT)}`.execute(db);
}

// A re-published event reports its original, older offset: the top never moves back in one epoch.
const TOPS_CONFLICT = `on conflict (channel) do update set
  epoch = excluded.epoch,
  top_offset = case when channel_streams.epoch = excluded.epoch and channel_streams.top_offset > excluded.top_offset then channel_streams.top_offset else excluded.top_offset end,
  updated_at = excluded.updated_at`;

/** A channel's history as kept here: its position and its publications still in the window. */
export interface StoredChannelHistory {
  channel: string;
  epoch: string;
  /** The channel's last offset. */
  offset: number;
  /** When the channel last published (its epoch and offset expire some time after). */
  updatedAt: number;
  /** Oldest first, at most `size`, published since `since`. */
  publications: { offset: number; data: string; publishedAt: number }[];
}

/**
 * Every channel's stream as recorded by `recordPublished`, with the events published since `since`
 * (the history TTL), at most `size` per channel: what the in-memory broker starts from.
 */
export async function loadChannelHistories(db: Kysely<DB>, opts: { since: number; size: number; streamsSince: number }): Promise<StoredChannelHistory[]> {
  const streams = await db.selectFrom('channel_streams').selectAll().where('updated_at', '>=', opts.streamsSince).execute();
  const byChannel = new Map<string, StoredChannelHistory>();
  for (const s of streams) byChannel.set(s.channel, { channel: s.channel, epoch: s.epoch, offset: Number(s.top_offset), updatedAt: Number(s.updated_at), publications: [] });
  const rows = await db
    .selectFrom('outbox')
    .select(['channels', 'offsets', 'payload', 'published_at'])
    .where('published_at', '>=', opts.since)
    .where('offsets', 'is not', null)
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const channels: string[] = JSON.parse(row.channels);
    const offsets: number[] = JSON.parse(row.offsets!);
    channels.forEach((channel, i) => {
      const stream = byChannel.get(channel);
      const offset = offsets[i] ?? 0;
      if (!stream || offset <= 0) return;
      // A crash between marking events and moving the top leaves the top behind: the events say more.
      if (offset > stream.offset) stream.offset = offset;
      stream.publications.push({ offset, data: row.payload, publishedAt: Number(row.published_at) });
    });
  }
  for (const stream of byChannel.values()) {
    stream.publications.sort((a, b) => a.offset - b.offset);
    if (stream.publications.length > opts.size) stream.publications.splice(0, stream.publications.length - opts.size);
  }
  return [...byChannel.values()];
}

/** Forgets channel positions not used since `before` (their epoch would have expired anyway). */
export async function deleteStaleStreams(db: Kysely<DB>, before: number): Promise<void> {
  await db.deleteFrom('channel_streams').where('updated_at', '<', before).execute();
}

/** An outbox row as the relay reads it: payload and channels still as stored text. */
export interface PendingEvent {
  id: number;
  type: string;
  channels: string;
  payload: string;
  created_at: number;
  /** Set on delayed events: when they became due. */
  not_before: number | null;
}

/** Unpublished rows claimed by any run of node `node` (claims are `<node>/<pid>/<incarnation>`). */
export async function claimsOfNode(db: Kysely<DB>, node: string): Promise<{ id: number; claimed_by: string }[]> {
  const rows = await db.selectFrom('outbox').select(['id', 'claimed_by']).where('published_at', 'is', null).where('claimed_by', 'like', `${node}/%`).execute();
  return rows.map((r) => ({ id: r.id, claimed_by: r.claimed_by! }));
}

/** Gives unpublished rows back to whoever claims next. */
export async function releaseClaims(db: Kysely<DB>, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('outbox').set({ claimed_by: null, claimed_at: null }).where('id', 'in', ids).where('published_at', 'is', null).execute();
}

/**
 * SQLite: claims the next `limit` unpublished rows that are due for `owner` in one statement
 * (atomic across processes), taking over claims older than `staleBefore`; oldest first. A delayed
 * row is skipped until its `not_before`: later rows pass it (per-channel order yields to the delay).
 */
export async function claimPending(db: Kysely<DB>, owner: string, now: number, staleBefore: number, limit: number): Promise<PendingEvent[]> {
  const claimed = await sql<PendingEvent>`
    update outbox set claimed_by = ${owner}, claimed_at = ${now}
    where id in (
      select id from outbox
      where published_at is null and (claimed_by is null or claimed_at < ${staleBefore})
        and (not_before is null or not_before <= ${now})
      order by id limit ${limit}
    )
    returning id, type, channels, payload, created_at, not_before`.execute(db);
  return claimed.rows.sort((a, b) => a.id - b.id);
}

/**
 * SQLite, inside the relay's write transaction (BEGIN IMMEDIATE: no other writer until it ends):
 * the next `limit` unpublished rows that are due, oldest first, without claiming them — the
 * transaction that publishes them also marks them. Rows claimed by another relay are left to it
 * until their claim is older than `staleBefore`.
 */
export async function duePending(db: Kysely<DB>, now: number, staleBefore: number, limit: number): Promise<PendingEvent[]> {
  const found = await sql<PendingEvent>`
    select id, type, channels, payload, created_at, not_before from outbox
    where published_at is null and (claimed_by is null or claimed_at < ${staleBefore})
      and (not_before is null or not_before <= ${now})
    order by id limit ${limit}`.execute(db);
  return found.rows;
}

// Any constant works; it names "the outbox drainer" among PostgreSQL advisory locks.
const PG_DRAIN_LOCK = 0x6f61_6f62; // "oaob"

/**
 * PostgreSQL: opens the drainer's transaction on `connection` (one connection, held by the caller),
 * takes the drainer's transaction-scoped advisory lock if no other node holds it — keyed by schema
 * too, so deployments sharing one PostgreSQL server never wait for each other — and, holding it,
 * reads the next `limit` unpublished rows that are due at `now`, oldest first. Empty when another
 * node holds the lock (it takes these rows) or nothing is due. The transaction stays open: the
 * caller publishes and ends it with `endDrainRound` (or a rollback).
 *
 * Rows claimed by a relay for publishing as they commit (outbox/handover.ts) are its own until
 * the claim is older than `staleBefore` (the claiming process died before it marked them).
 *
 * BEGIN, the lock and the read are three statements sent as one message (the simple query protocol:
 * one round trip for the three). The lock and the read must be separate statements: a statement
 * reads from the snapshot taken when it starts, so a read in the statement that takes the lock
 * could predate the commit of the relay that just released it, and publish again the rows that
 * relay marked (seen under load: 25 rows of 300 published twice). Under READ COMMITTED each
 * statement of the message takes its snapshot when it starts, after the one before it has ended,
 * so the read sees every mark committed before the lock was granted. The lock statement leaves its
 * outcome in a transaction-local setting that the read checks.
 *
 * The lock statement also turns `synchronous_commit` off for the rest of the transaction: the
 * round's COMMIT then returns without waiting for its WAL flush, so the next round (and the next
 * commit's events) never waits on it. Losing those published marks in a crash only publishes the
 * rows again, which the relay allows anyway (at least once; the broker drops a repeat by the event's id).
 */
export async function beginDrainRound(connection: Kysely<DB>, limit: number, now: number, staleBefore: number): Promise<PendingEvent[]> {
  const text = `begin;
    select set_config('openalerts.outbox_drainer', pg_try_advisory_xact_lock(${PG_DRAIN_LOCK}, hashtext(current_schema()))::text, true),
      set_config('synchronous_commit', 'off', true);
    select id, type, channels, payload, created_at, not_before from outbox
    where current_setting('openalerts.outbox_drainer', true) = 'true'
      and published_at is null and (not_before is null or not_before <= ${integer(now)})
      and (claimed_by is null or claimed_at < ${integer(staleBefore)})
    order by id limit ${integer(limit)}`;
  const { rows } = await connection.executeQuery<PendingEvent>(CompiledQuery.raw(text));
  return rows;
}

/**
 * PostgreSQL: ends the transaction `beginDrainRound` opened, first marking the events it published
 * (with their offsets and the channels' tops when `tops` is given: `recordPublished`; else
 * published only: `markPublished`) — all in one message, so one round trip. Values are written
 * into the text as literals (a message of several statements cannot carry parameters); the
 * caller rolls back if it fails.
 */
export async function endDrainRound(connection: Kysely<DB>, events: PublishedPositions[], tops: StreamTop[] | null, now: number): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw([...markStatements(events, tops, now), 'commit'].join(';\n')));
}

/**
 * PostgreSQL: marks published the events a relay published as they committed (claimed for it:
 * outbox/handover.ts), as `endDrainRound` marks a round's, in a transaction of its own that does
 * not wait for its WAL flush — one round trip. For a relay that stops with such marks left.
 */
export async function markHandedOver(connection: Kysely<DB>, events: PublishedPositions[], tops: StreamTop[] | null, now: number): Promise<void> {
  if (events.length === 0) return;
  const statements = ['begin', "select set_config('synchronous_commit', 'off', true)", ...markStatements(events, tops, now), 'commit'];
  await connection.executeQuery(CompiledQuery.raw(statements.join(';\n')));
}

function markStatements(events: PublishedPositions[], tops: StreamTop[] | null, now: number): string[] {
  const at = integer(now);
  const statements: string[] = [];
  if (events.length === 0) {
    // Nothing to mark: only the COMMIT.
  } else if (tops === null) {
    statements.push(`update outbox set published_at = ${at} where id in (${events.map((e) => integer(e.id)).join(', ')})`);
  } else {
    const values = events.map((e) => `(${integer(e.id)}::bigint, ${postgresLiteral(JSON.stringify(e.offsets))})`).join(', ');
    statements.push(`update outbox set published_at = ${at}, offsets = v.offsets from (values ${values}) as v(id, offsets) where outbox.id = v.id`);
    if (tops.length > 0) {
      const rows = tops.map((t) => `(${postgresLiteral(t.channel)}, ${postgresLiteral(t.epoch)}, ${integer(t.offset)}, ${at})`).join(', ');
      statements.push(`insert into channel_streams (channel, epoch, top_offset, updated_at) values ${rows} ${TOPS_CONFLICT}`);
    }
  }
  return statements;
}

/** An integer for SQL text: anything else is our own bug, never written into a statement. */
function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
  return String(value);
}

/** Marks events published without recording offsets (a broker with its own history: Redis). */
export async function markPublished(db: Kysely<DB>, ids: number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('outbox').set({ published_at: now }).where('id', 'in', ids).execute();
}

/**
 * Deletes rows published before `before` (kept until then for inspection and history) once the
 * webhooks fan-out has read them too — or when no subscription is kept at all: then no dispatcher
 * thread runs to read them, and a subscription made later gets nothing from before it anyway.
 */
export async function deletePublishedBefore(db: Kysely<DB>, before: number): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('published_at', '<', before)
    .where((eb) => eb.or([eb('webhooks_at', 'is not', null), eb.not(eb.exists(eb.selectFrom('webhook_subscriptions').select('id').where('status', '!=', 'removed')))]))
    .execute();
}
