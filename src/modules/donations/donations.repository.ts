import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { NowStatements } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { containsText } from '../../db/like.js';
import { executeNamed } from '../../db/named-statements.js';
import type { DB } from '../../db/schema.js';
import type { RateTable } from '../../domain/rates.js';
import type { ModerationSettingsRow } from '../moderation/moderation.table.js';
import type { OutboxClaim } from '../outbox/handover.js';
import type { DonationRow, DonationsTable } from './donations.table.js';

/**
 * Every column a donation is written with, and its PostgreSQL type: the one list both insert paths
 * are built from (`insertDonation`, and `insertDonationsWithAlerts` for a batch). A Record over the
 * table's columns, so a column added to DonationsTable fails to compile until it is added here.
 */
const WRITTEN_COLUMNS = {
  user_id: 'bigint',
  username: 'text',
  message_type: 'text',
  message: 'text',
  amount: 'bigint',
  currency: 'text',
  amount_in_user_currency: 'bigint',
  user_currency: 'text',
  payin_system: 'text',
  is_shown: 'integer',
  created_at: 'bigint',
  shown_at: 'bigint',
  poll_option_id: 'bigint',
} as const satisfies Record<Exclude<keyof DonationsTable, 'id'>, string>;
type WrittenColumn = keyof typeof WRITTEN_COLUMNS;
const WRITTEN = Object.keys(WRITTEN_COLUMNS) as WrittenColumn[];
const WRITTEN_LIST = WRITTEN.join(', ');

// The insert's text, once per dialect: on the way of every donation to its alert, where building a
// query cost more than running it.
const INSERT_DONATION = {
  sqlite: `insert into donations (${WRITTEN_LIST}) values (${WRITTEN.map(() => '?').join(', ')}) returning id`,
  postgres: `insert into donations (${WRITTEN_LIST}) values (${WRITTEN.map((_, i) => `$${i + 1}`).join(', ')}) returning id`,
};

/** Writes a whole donation row; the row is what was written, with its new id. */
export async function insertDonation(db: Kysely<DB>, row: Omit<DonationRow, 'id'>): Promise<DonationRow> {
  const { rows } = await db.executeQuery<{ id: number }>(CompiledQuery.raw(INSERT_DONATION[dialectOf(db)], WRITTEN.map((column) => row[column])));
  return { id: Number(rows[0]!.id), ...row };
}

/** `insertDonation` on SQLite, as a statement of `transactNow`: the new id. */
export function insertDonationNow(tx: NowStatements, row: Omit<DonationRow, 'id'>): number {
  return tx.get<{ id: number }>(INSERT_DONATION.sqlite, WRITTEN.map((column) => row[column]))!.id;
}

/** What a batched donation needs to know about its streamer (PostgreSQL: `findDonationContexts`). */
export interface DonationContext {
  user: { id: number; name: string; currency: string; is_active: number };
  /** Their moderation settings row; null: no rules. */
  moderation: ModerationSettingsRow | null;
  /** They run at least one goal (the batch leaves those donations to the transactional path). */
  hasGoals: boolean;
}

const HAS_GOALS = 'exists (select 1 from goals g where g.user_id = u.id and g.is_active = 1)';
/**
 * A streamer's context as both reads below select it (the rate table is dialect-specific): the
 * streamer, their moderation settings (all null: none), whether they run a goal.
 */
const CONTEXT_COLUMNS = `u.id, u.name, u.currency, u.is_active,
  m.user_id is not null as has_settings, m.banned_words, m.banned_words_mode, m.links, m.max_message_length, m.min_message_amount,
  m.ip_rate_limit, m.donor_rate_limit, m.rate_window_seconds, m.approval_required, m.alert_delay_seconds, m.updated_at,
  ${HAS_GOALS} as has_goals`;
const CONTEXT_FROM = 'from users u left join moderation_settings m on m.user_id = u.id';
/**
 * PostgreSQL: a digest of everything a donation is decided on that belongs to the streamer (the
 * row `u`, with `m` their settings joined as in CONTEXT_FROM): read with a context, and compared
 * by the write that uses it (`insertDonationsWithAlerts`). It is the data itself, not a version
 * some writer must remember to bump: every writer counts — another node, an older version of this
 * one, the CLI, a hand-made UPDATE — and nothing needs a trigger. `m.*` takes in settings columns
 * added later by themselves.
 */
const CONTEXT_STAMP = `md5(row(u.id, u.name, u.currency, u.is_active, m.*, ${HAS_GOALS})::text)`;
/** The same for the rate table, the one part of a donation's context every streamer shares. */
const RATES_JSON = 'json_object_agg(currency, per_usd order by currency)';
const RATES_STAMP = `(select md5(coalesce(${RATES_JSON}::text, '')) from currency_rates)`;
// Compiled once: createDonation reads one for every donation it has no context of.
const CONTEXTS_POSTGRES = `select ${CONTEXT_COLUMNS}, ${CONTEXT_STAMP} as stamp, (select ${RATES_JSON} from currency_rates) as rates, ${RATES_STAMP} as rates_stamp
  ${CONTEXT_FROM} where u.id = any($1::bigint[])`;
const CONTEXT_SQLITE = `select ${CONTEXT_COLUMNS}, (select json_group_object(currency, per_usd) from currency_rates) as rates ${CONTEXT_FROM} where u.id = ?`;
/** A row of CONTEXT_COLUMNS; booleans are 1/0 on SQLite. */
type ContextRow<B> = ModerationSettingsRow & { id: number; name: string; currency: string; is_active: number; has_settings: B; has_goals: B };

/** Contexts as the PostgreSQL read gives them, each with the stamp its write must still match. */
export interface StampedContexts {
  /** By streamer id; unknown ids are left out. */
  contexts: Map<number, { context: DonationContext; stamp: string }>;
  /** Undefined when no streamer was found (nothing to convert for). */
  rates: { table: RateTable; stamp: string } | undefined;
}

/**
 * PostgreSQL: in ONE statement, for a batch of donations, each streamer (by id; unknown ids are
 * left out), their moderation settings and whether they run a goal, and the rate table (the same
 * for every row: an uncorrelated subquery, evaluated once), with their stamps.
 */
export async function findDonationContexts(db: Kysely<DB>, userIds: readonly number[]): Promise<StampedContexts> {
  const ids = [...new Set(userIds)];
  const rows = await db.executeQuery<ContextRow<boolean> & { stamp: string; rates: Record<string, number> | null; rates_stamp: string }>(CompiledQuery.raw(CONTEXTS_POSTGRES, [ids]));
  const contexts: StampedContexts['contexts'] = new Map();
  let rates: StampedContexts['rates'];
  for (const { id, name, currency, is_active, has_settings, has_goals, stamp, rates: table, rates_stamp, ...settings } of rows.rows) {
    contexts.set(id, { context: { user: { id, name, currency, is_active }, moderation: has_settings ? { ...settings, user_id: id } : null, hasGoals: has_goals }, stamp });
    rates ??= { table: Object.fromEntries(Object.entries(table ?? {}).map(([c, r]) => [c, Number(r)])), stamp: rates_stamp };
  }
  return { contexts, rates };
}

/**
 * One streamer's context as `findDonationContexts` reads it for a batch, in one statement: the
 * transactional path of createDonation (SQLite; PostgreSQL with a vote, a goal or a caller's
 * transaction) reads it instead of four statements (streamer, rates, moderation settings, goals),
 * each of which cost as much to build and run as to answer. Undefined context: no such streamer.
 */
export async function findDonationContext(db: Kysely<DB>, userId: number): Promise<{ context: DonationContext | undefined; rates: RateTable }> {
  if (dialectOf(db) === 'postgres') {
    const { contexts, rates } = await findDonationContexts(db, [userId]);
    return { context: contexts.get(userId)?.context, rates: rates?.table ?? {} };
  }
  return sqliteContext((await db.executeQuery<SqliteContextRow>(CompiledQuery.raw(CONTEXT_SQLITE, [userId]))).rows[0]);
}

/** `findDonationContext` on SQLite, as a statement of `transactNow`. */
export function donationContextNow(tx: NowStatements, userId: number): { context: DonationContext | undefined; rates: RateTable } {
  return sqliteContext(tx.get<SqliteContextRow>(CONTEXT_SQLITE, [userId]));
}

type SqliteContextRow = ContextRow<number> & { rates: string | null };

function sqliteContext(row: SqliteContextRow | undefined): { context: DonationContext | undefined; rates: RateTable } {
  if (!row) return { context: undefined, rates: {} };
  const { id, name, currency, is_active, has_settings, has_goals, rates, ...settings } = row;
  return {
    context: { user: { id, name, currency, is_active }, moderation: has_settings ? { ...settings, user_id: id } : null, hasGoals: has_goals === 1 },
    rates: rateTable(rates),
  };
}

/** The last rate table read, by its JSON text: rates change seldom, donations read them every time. */
let lastRates: { text: string; table: RateTable } = { text: '{}', table: Object.freeze({}) };

function rateTable(text: string | null): RateTable {
  if (text !== lastRates.text && text !== null) {
    // SQLite's JSON gives each REAL as the shortest text that reads back to the same double.
    const table: Record<string, number> = JSON.parse(text);
    lastRates = { text, table: Object.freeze(Object.fromEntries(Object.entries(table).map(([c, r]) => [c, Number(r)]))) };
  }
  return text === null ? {} : lastRates.table;
}

/** A donation to write with its moderation row and its alert (donations.service.ts works them out). */
export interface DonationWrite {
  donation: Omit<DonationRow, 'id'>;
  moderation: { status: string; shown_username: string; shown_message: string; reasons: string; publish_at: number | null } | null;
  /**
   * The `donation.created` outbox row, or null while the alert is held. `payloadAfterId`: its JSON
   * payload after the leading `{"id":<donation id>` — the statement splices the new id in, so the
   * payload is the same bytes `JSON.stringify` gives for the whole object.
   */
  event: { type: string; channels: string[]; payloadAfterId: string; notBefore: number | null } | null;
  /** The stamp of the streamer's context it was decided on (`findDonationContexts`). */
  stamp: string;
}

/**
 * PostgreSQL: writes a batch of donations, their moderation rows and their outbox events in ONE
 * statement (data-modifying CTEs over arrays), so a batch costs one round trip whatever its size
 * and, run outside a transaction, commits by itself: a donation exists if and only if its alert is
 * queued or its moderation row holds it. The streamers' donation counters move in the same
 * statement (the statement-level triggers of migration 0015, one update per streamer). Ids are
 * drawn first (the events' too), so the events carry the donations' ids and follow their order.
 *
 * With `claim`, the events due now are claimed for this process's relay (outbox/handover.ts), which
 * publishes them once the statement has returned, without reading them back — unless a row written
 * before this statement is still due and unpublished, unclaimed or under a dead claim: a relay round
 * has yet to publish it, and these events must not pass it on their channels (a streamer's earlier
 * alert written by another process, or by a transaction of this one). Then nothing is claimed, and a
 * round publishes both in order. Delayed events are never claimed: the relay's poll finds them due.
 *
 * A donation is written only if its streamer's context and the rate table still have the stamps
 * it was decided on (`ratesStamp`, each write's `stamp`), checked in the statement's own snapshot:
 * decided on a cached context that a committed write has changed since — or on a streamer deleted
 * since — it is left out, with nothing of it written, for the caller to decide again.
 *
 * Returns, by position, the new donation ids (null: left out, its context had changed) and their
 * events' ids (null: no event or left out), and whether the events were claimed.
 */
export async function insertDonationsWithAlerts(
  db: Kysely<DB>,
  writes: readonly DonationWrite[],
  ratesStamp: string,
  claim: OutboxClaim | null,
): Promise<{ ids: (number | null)[]; eventIds: (number | null)[]; claimed: boolean }> {
  // One donation (the usual batch): scalars, for the statement's single-row form (INSERT_ONE_DONATION).
  const single = writes.length === 1;
  const col = <T>(pick: (w: DonationWrite) => T) => (single ? pick(writes[0]!) : writes.map(pick));
  const parameters: unknown[] = [
    ...WRITTEN.map((column) => col((w) => w.donation[column])),
    col((w) => w.moderation?.status ?? null),
    col((w) => w.moderation?.shown_username ?? null),
    col((w) => w.moderation?.shown_message ?? null),
    col((w) => w.moderation?.reasons ?? null),
    col((w) => w.moderation?.publish_at ?? null),
    col((w) => w.event?.type ?? null),
    col((w) => (w.event ? JSON.stringify(w.event.channels) : null)),
    col((w) => w.event?.payloadAfterId ?? null),
    col((w) => w.event?.notBefore ?? null),
    col((w) => w.stamp),
    ratesStamp,
    claim?.owner ?? null,
    claim?.now ?? 0,
    claim?.staleBefore ?? 0,
  ];
  // Named (prepared once per connection): parsing and planning this text was half its time
  // (0.5 of 1.1-1.2 ms with the WAL flush left out, bench/README.md). Its plan cannot go bad as
  // tables grow: it reads `users` and `moderation_settings` by primary key, and `outbox` only
  // through `published_at is null` in id order with a limit, which an index scan of either outbox
  // index on that column answers, empty or full.
  const text = single ? INSERT_ONE_DONATION : INSERT_DONATIONS_WITH_ALERTS;
  const { rows } = await executeNamed(db, CompiledQuery.raw(text, parameters) as CompiledQuery<{ id: number; ord: number; event_id: number | null; claimed: boolean }>);
  const ids: (number | null)[] = new Array(writes.length).fill(null);
  const eventIds: (number | null)[] = new Array(writes.length).fill(null);
  let claimed = false;
  for (const row of rows) {
    ids[Number(row.ord) - 1] = Number(row.id);
    eventIds[Number(row.ord) - 1] = row.event_id === null ? null : Number(row.event_id);
    claimed = row.claimed;
  }
  return { ids, eventIds, claimed };
}

// The text once: building it with Kysely on every batch cost more than the rest of the batch's
// JavaScript. The arrays (scalars in the single-row form) are $1..$23, then the rates' stamp, the
// claim's owner (null: none), its time and stale bound.
const INSERT_ARRAYS = [
  ...WRITTEN.map((column) => `${WRITTEN_COLUMNS[column]}[]`),
  'text[]', 'text[]', 'text[]', 'text[]', 'bigint[]',
  'text[]', 'text[]', 'text[]', 'bigint[]',
  'text[]',
];
const RATES_STAMP_PARAM = `$${INSERT_ARRAYS.length + 1}::text`;
const CLAIM_OWNER = `$${INSERT_ARRAYS.length + 2}::text`;
const CLAIM_NOW = `$${INSERT_ARRAYS.length + 3}::bigint`;
const CLAIM_STALE = `$${INSERT_ARRAYS.length + 4}::bigint`;
/** An input row whose streamer's context is still the one it was decided on (the `fresh` CTE). */
const KEPT = 'user_id = any(array(select id from fresh))';
const INPUT_COLUMNS = `${WRITTEN_LIST},
      m_status, m_shown_username, m_shown_message, m_reasons, m_publish_at,
      e_type, e_channels, e_payload_after_id, e_not_before, stamp, ord`;

/**
 * The statement for a batch (arrays, one element per donation) or, with `single`, for one donation
 * (scalars). PostgreSQL keeps a named statement's generic plan only while it costs no more than a
 * plan made for the values at hand; a generic plan counts on ten elements in each array, so for one
 * donation, once the tables were analysed with a few thousand streamers' moderation settings, it
 * lost, and every execution was planned anew (0.3-0.4 ms more backend CPU, bench/README.md). The
 * single-row form's generic plan counts on the one row it gets and is kept.
 */
function insertDonationsText(single: boolean): string {
  const input = single
    ? `(select ${INSERT_ARRAYS.map((type, k) => `$${k + 1}::${type.slice(0, -2)}`).join(', ')}, 1::bigint) as i(
      ${INPUT_COLUMNS}
    )`
    : `unnest(${INSERT_ARRAYS.map((type, k) => `$${k + 1}::${type}`).join(', ')}) with ordinality as i(
      ${INPUT_COLUMNS}
    )`;
  const isOneOf = (k: number, type: string) => (single ? `= $${k}::${type}` : `= any($${k}::${type}[])`);
  return `
  with input as materialized (
    -- The identity columns' own sequences (PostgreSQL names them <table>_<column>_seq), named as
    -- constants: resolved once when the statement is prepared, where pg_get_serial_sequence looked
    -- its sequence up in the catalog for every row (16-33 us of backend CPU, bench/README.md).
    select i.*, nextval('donations_id_seq'::regclass) as id,
      case when i.e_type is not null then nextval('outbox_id_seq'::regclass) end as event_id
    from ${input}
  ),
  -- The streamers whose context is still the one their donations were decided on. One look-up of
  -- the batch's ids (a correlated check per donation made the generic plan look dearer than a
  -- custom one, and PostgreSQL planned the statement anew on every execution); the digest holds
  -- the streamer's id, so matching it against the batch's digests pairs each with its own.
  fresh as materialized (
    select u.id ${CONTEXT_FROM}
    where u.id ${isOneOf(1, 'bigint')} and ${CONTEXT_STAMP} ${isOneOf(INSERT_ARRAYS.length, 'text')}
      and ${RATES_STAMP} = ${RATES_STAMP_PARAM}
  ),
  -- The first such row in id order, not EXISTS: the planner makes EXISTS a bitmap scan, which
  -- visits the heap for every entry of outbox_pending, dead ones included — each row the relay
  -- has marked published since the last VACUUM (5,800 entries, 0.3-0.6 ms per statement in the
  -- realistic bench). A plain index scan marks the dead entries as it passes them, and skips them
  -- from then on (so do the relay's reads).
  claim as materialized (
    select ${CLAIM_OWNER} as owner
    where ${CLAIM_OWNER} is not null and (
      select o.id from outbox o
      where o.published_at is null and (o.claimed_by is null or o.claimed_at < ${CLAIM_STALE})
        and (o.not_before is null or o.not_before <= ${CLAIM_NOW})
      order by o.id limit 1
    ) is null
  ),
  -- Each part filters the input by \`fresh\` itself (an array, built once) rather than joining the
  -- donation insert's RETURNING: the ids are the input's, drawn above, and the hash joins and sorts
  -- of that join cost 0.05-0.07 ms of a paced statement (bench/README.md).
  donation as (
    insert into donations (id, ${WRITTEN_LIST})
    select id, ${WRITTEN_LIST}
    from input where ${KEPT}
  ),
  moderation as (
    insert into donation_moderation (donation_id, user_id, status, shown_username, shown_message, reasons, publish_at, decided_at)
    select i.id, i.user_id, i.m_status, i.m_shown_username, i.m_shown_message, i.m_reasons, i.m_publish_at, null
    from input i where i.m_status is not null and i.${KEPT}
  ),
  event as (
    insert into outbox (id, type, user_id, channels, payload, created_at, not_before, claimed_by, claimed_at)
    select i.event_id, i.e_type, i.user_id, i.e_channels, '{"id":' || i.id || i.e_payload_after_id, i.created_at, i.e_not_before,
      c.owner, case when c.owner is not null then ${CLAIM_NOW} end
    from input i left join claim c on i.e_not_before is null
    where i.e_type is not null and i.${KEPT}
  )
  select i.id, i.ord, i.event_id, exists (select 1 from claim) as claimed from input i where i.${KEPT}`;
}
const INSERT_DONATIONS_WITH_ALERTS = insertDonationsText(false);
const INSERT_ONE_DONATION = insertDonationsText(true);

export async function findDonation(db: Kysely<DB>, userId: number, id: number): Promise<DonationRow | undefined> {
  return db.selectFrom('donations').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/**
 * What a cached page of the streamer's donations depends on besides the rows: their name (shown
 * in every item), whether they are active, and their donation counter (migration 0015). One
 * primary-key read of each table. Undefined when there is no such user.
 */
export interface DonationPageStamp {
  name: string;
  isActive: boolean;
  /** Changes with every committed write to the streamer's donations; 0 before the first. */
  version: number;
  total: number;
}

/** The stamps of several streamers at once (batched-read.ts), by user id; unknown ids are left out. */
export async function donationPageStamps(db: Kysely<DB>, userIds: number[]): Promise<Map<number, DonationPageStamp>> {
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('donation_counters as c', 'c.user_id', 'u.id')
    .select(['u.id', 'u.name', 'u.is_active', 'c.version', 'c.total'])
    .where('u.id', 'in', userIds)
    .execute();
  return new Map(rows.map((row) => [row.id, { name: row.name, isActive: Boolean(row.is_active), version: Number(row.version ?? 0), total: Number(row.total ?? 0) }]));
}

const DONATION_COLUMNS: (keyof DonationsTable)[] = ['id', ...WRITTEN];

/**
 * One page, newest first (compatibility.md §2), with the stamp it was read at. On PostgreSQL in ONE
 * statement — one round trip, and the rows, the total and the version are one snapshot. On SQLite,
 * where a statement costs no round trip and that join runs 2–3× slower than two plain reads
 * (materialized subquery), the stamp is read first and then the rows: a write committing between
 * them leaves the rows newer than the stamp, so the page is cached under a stamp that is already
 * out of date and never served from the cache. The total is the maintained counter either way,
 * never a `count(*)`.
 */
export async function pageOfDonations(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ stamp: DonationPageStamp; rows: DonationRow[] } | undefined> {
  const pageRows = db.selectFrom('donations').select(DONATION_COLUMNS).where('user_id', '=', userId).orderBy('id', 'desc').limit(perPage).offset((page - 1) * perPage);
  if (dialectOf(db) === 'sqlite') {
    const stamp = (await donationPageStamps(db, [userId])).get(userId);
    return stamp && { stamp, rows: await pageRows.execute() };
  }
  const found = await db
    .selectFrom('users as u')
    .leftJoin('donation_counters as c', 'c.user_id', 'u.id')
    .leftJoin(pageRows.as('d'), (join) => join.onTrue())
    .select(['u.name as user_name', 'u.is_active as user_is_active', 'c.version as counter_version', 'c.total as counter_total'])
    .select(DONATION_COLUMNS.map((column) => `d.${column}` as const))
    .where('u.id', '=', userId)
    .orderBy('d.id', 'desc')
    .execute();
  const first = found[0];
  if (!first) return undefined;
  const stamp = { name: first.user_name, isActive: Boolean(first.user_is_active), version: Number(first.counter_version ?? 0), total: Number(first.counter_total ?? 0) };
  // No page rows: the one row of the outer join has a null id.
  const rows = found.filter((r) => r.id !== null).map((r) => Object.fromEntries(DONATION_COLUMNS.map((column) => [column, r[column]])) as unknown as DonationRow);
  return { stamp, rows };
}

/** What the dashboard's donation list filters on; every field is optional. Times are epoch ms. */
export interface DonationFilter {
  /** Part of the donor name, ignoring case. */
  donor?: string;
  /** The currency the donor paid in. */
  currency?: string;
  fromMs?: number;
  toMsExclusive?: number;
  /** Minor units: of `currency` when one is chosen, else of the streamer's currency at donation time. */
  minAmount?: number;
}

/** One page of a streamer's donations matching `filter`, newest first, and how many match in all. */
export async function filteredDonations(
  db: Kysely<DB>,
  userId: number,
  filter: DonationFilter,
  opts: { limit: number; offset: number },
): Promise<{ rows: DonationRow[]; total: number }> {
  let query = db.selectFrom('donations').where('user_id', '=', userId);
  if (filter.donor) query = query.where(containsText('username', filter.donor));
  if (filter.currency) query = query.where('currency', '=', filter.currency);
  if (filter.fromMs !== undefined) query = query.where('created_at', '>=', filter.fromMs);
  if (filter.toMsExclusive !== undefined) query = query.where('created_at', '<', filter.toMsExclusive);
  if (filter.minAmount !== undefined) query = query.where(filter.currency ? 'amount' : 'amount_in_user_currency', '>=', filter.minAmount);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').limit(opts.limit).offset(opts.offset).execute(),
    query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** The streamer's latest donations, newest first. */
export async function latestDonations(db: Kysely<DB>, userId: number, limit: number): Promise<DonationRow[]> {
  return db.selectFrom('donations').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).execute();
}

/**
 * How many donations the streamer received since `since` that were converted into `userCurrency`,
 * and their sum in its minor units.
 */
export async function donationTotalsSince(db: Kysely<DB>, userId: number, userCurrency: string, since: number): Promise<{ count: number; total: number }> {
  const row = await db
    .selectFrom('donations')
    .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.sum<string | number | null>('amount_in_user_currency').as('total')])
    .where('user_id', '=', userId)
    .where('user_currency', '=', userCurrency)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), total: Number(row.total ?? 0) };
}

export async function markDonationShown(db: Kysely<DB>, userId: number, id: number, at = Date.now()): Promise<DonationRow | undefined> {
  await db.updateTable('donations').set({ is_shown: 1, shown_at: at }).where('user_id', '=', userId).where('id', '=', id).where('is_shown', '=', 0).execute();
  return findDonation(db, userId, id);
}
