import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import type { StraightStatements } from '../../db/database.js';
import { prepared } from '../../db/named-statements.js';
import type { DB } from '../../db/schema.js';
import type { AttemptRow, DeliveryRow, StatusReason, SubscriptionRow, WebhookDeliveriesTable } from './webhooks.table.js';

// ---- Subscriptions -------------------------------------------------------------------------------

export async function insertSubscription(
  db: Kysely<DB>,
  row: { app_id: number; user_id: number; url: string; events: string; secret_sealed: string; now: number },
): Promise<SubscriptionRow> {
  const { now, ...values } = row;
  return db
    .insertInto('webhook_subscriptions')
    .values({ ...values, status: 'active', created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSubscription(db: Kysely<DB>, id: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An application's subscriptions for one streamer that still exist (not removed), oldest first. */
export async function subscriptionsOfGrant(db: Kysely<DB>, appId: number, userId: number): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where('status', '!=', 'removed')
    .orderBy('id')
    .execute();
}

export type SubscriptionWithApp = SubscriptionRow & { app_name: string; app_owner_id: number; streamer_name: string };

/** Subscriptions with their application's and streamer's names, for the dashboard, newest first. */
const subscriptionsWithApp = (db: Kysely<DB>) =>
  db
    .selectFrom('webhook_subscriptions as s')
    .innerJoin('apps', 'apps.id', 's.app_id')
    .innerJoin('users', 'users.id', 's.user_id')
    .selectAll('s')
    .select(['apps.name as app_name', 'apps.owner_id as app_owner_id', 'users.name as streamer_name'])
    .orderBy('s.id', 'desc');

/** Every subscription made for this streamer, by any application. */
export async function subscriptionsForStreamer(db: Kysely<DB>, userId: number): Promise<SubscriptionWithApp[]> {
  return subscriptionsWithApp(db).where('s.user_id', '=', userId).execute();
}

/** Every subscription of the applications this account owns, for any streamer. */
export async function subscriptionsOfOwnedApps(db: Kysely<DB>, ownerId: number): Promise<SubscriptionWithApp[]> {
  return subscriptionsWithApp(db).where('apps.owner_id', '=', ownerId).execute();
}

/** Leaves `active` for good (deleted, or 410 Gone): its queue is cancelled, its log kept. */
export async function removeSubscription(db: Kysely<DB>, id: number, reason: StatusReason, now: number): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ status: 'removed', status_reason: reason, status_at: now, updated_at: now, next_attempt_at: null })
    .where('id', '=', id)
    .execute();
  await db.updateTable('webhook_deliveries').set({ status: 'cancelled', finished_at: now }).where('subscription_id', '=', id).where('status', '=', 'pending').execute();
}

/** The retry window ran out: stop delivering until someone re-enables it (the queue stays). */
export async function disableSubscription(db: Kysely<DB>, id: number, reason: StatusReason, now: number): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ status: 'disabled', status_reason: reason, status_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .execute();
}

/** Back to `active`: what is queued goes out now, each with a fresh retry window. */
export async function reenableSubscription(db: Kysely<DB>, id: number, now: number): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_subscriptions')
    .set({ status: 'active', status_reason: null, status_at: now, updated_at: now, next_attempt_at: now })
    .where('id', '=', id)
    .where('status', '=', 'disabled')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return false;
  await db.updateTable('webhook_deliveries').set({ window_start: now, next_attempt_at: now }).where('subscription_id', '=', id).where('status', '=', 'pending').execute();
  return true;
}

export async function rotateSecret(db: Kysely<DB>, id: number, secretSealed: string, previousSealed: string, previousUntil: number, now: number): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ secret_sealed: secretSealed, previous_secret_sealed: previousSealed, previous_secret_until: previousUntil, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Whether any subscription could be delivered to, now or once re-enabled (not removed): the dispatcher thread is needed. */
export async function anySubscriptionKept(db: Kysely<DB>): Promise<boolean> {
  const row = await db.selectFrom('webhook_subscriptions').select('id').where('status', '!=', 'removed').limit(1).executeTakeFirst();
  return row !== undefined;
}

// ---- Fan-out: outbox events → deliveries ---------------------------------------------------------

export interface FanOutEvent {
  id: number;
  type: string;
  user_id: number | null;
  payload: string;
  created_at: number;
}

/**
 * Outbox rows the fan-out has not read yet and that are due, oldest first. A row delayed by the
 * streamer's alert delay (`not_before`, moderation) waits, and later rows pass it, as on the
 * real-time channels: integrations learn of a donation when the stream does.
 */
export async function eventsToFanOut(tx: Kysely<DB>, limit: number, now: number): Promise<FanOutEvent[]> {
  return tx
    .selectFrom('outbox')
    .select(['id', 'type', 'user_id', 'payload', 'created_at'])
    .where('webhooks_at', 'is', null)
    .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Marks these outbox rows read by the fan-out if none of them was yet; false (nothing to trust in
 * the transaction) if one was — they were read before the transaction began, and another node
 * fanned them out meanwhile.
 */
export async function markFannedOutIfUnread(tx: Kysely<DB>, ids: number[], now: number): Promise<boolean> {
  if (ids.length === 0) return true;
  const result = await tx.updateTable('outbox').set({ webhooks_at: now }).where('id', 'in', ids).where('webhooks_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === ids.length;
}

export type FanOutSubscription = Pick<SubscriptionRow, 'id' | 'app_id' | 'user_id' | 'events' | 'created_at'>;
/** The active subscriptions of these streamers, in id order. */
export async function activeSubscriptionsOf(tx: Kysely<DB>, userIds: number[]): Promise<FanOutSubscription[]> {
  if (userIds.length === 0) return [];
  return tx.selectFrom('webhook_subscriptions').select(['id', 'app_id', 'user_id', 'events', 'created_at']).where('status', '=', 'active').where('user_id', 'in', userIds).orderBy('id').execute();
}

// SQLite: the dispatcher's statements as `writeInTurns` runs them (webhooks.dispatcher.ts), straight
// on the connection, one prepared text each whatever the number of ids (a JSON array). `+status`
// keeps the planner off the status index, which it would otherwise prefer to the key for an id
// list whose length it cannot see.

/** `activeSubscriptionsOf` as a statement of `writeInTurns`. */
export function activeSubscriptionsNow(tx: StraightStatements, userIds: number[]): FanOutSubscription[] {
  if (userIds.length === 0) return [];
  return tx.all<FanOutSubscription>(
    `select id, app_id, user_id, events, created_at from webhook_subscriptions
      where +status = 'active' and user_id in (select value from json_each(?)) order by id`,
    [JSON.stringify(userIds)],
  );
}

/** `markFannedOutIfUnread` as a statement of `writeInTurns`. */
export function markFannedOutNow(tx: StraightStatements, ids: number[], now: number): boolean {
  if (ids.length === 0) return true;
  const marked = tx.run('update outbox set webhooks_at = ? where id in (select value from json_each(?)) and webhooks_at is null', [now, JSON.stringify(ids)]);
  return marked === ids.length;
}

/** A fan-out's deliveries (fanOutInserts) as statements of `writeInTurns`: one prepared insert per row. */
export function insertDeliveriesNow(tx: StraightStatements, rows: Insertable<WebhookDeliveriesTable>[]): void {
  for (const r of rows) {
    tx.run(
      `insert into webhook_deliveries (subscription_id, message_id, event_type, body, status, next_attempt_at, window_start, created_at)
        values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.subscription_id, r.message_id, r.event_type, r.body, r.status, r.next_attempt_at, r.window_start, r.created_at],
    );
  }
}

/** The application that sent each of these custom alerts. */
export async function customAlertSenders(tx: Kysely<DB>, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.selectFrom('custom_alerts').select(['id', 'client_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.client_id]));
}

/** The application whose merchant made each of these sales. */
export async function saleApps(tx: Kysely<DB>, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await tx
    .selectFrom('merchandise_sales')
    .innerJoin('merchants', 'merchants.id', 'merchandise_sales.merchant_id')
    .select(['merchandise_sales.id as id', 'merchants.app_id as app_id'])
    .where('merchandise_sales.id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.app_id]));
}

/** Delivery rows as given (tests set up a log with it; the dispatcher writes by fanOutInserts and insertDeliveriesNow). */
export async function insertDeliveries(tx: Kysely<DB>, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  await tx.insertInto('webhook_deliveries').values(rows).execute();
}

/**
 * The webhook dispatcher's writes, built ahead: Kysely's query building and compiling is work of
 * the thread alone, and the dispatcher does it before it takes the write lock (SQLite), so a turn of
 * the lock — which a donation's commit may be waiting for — is the statements alone. `run` them in
 * the transaction.
 */
export async function run(tx: Kysely<DB>, statements: readonly CompiledQuery[]): Promise<void> {
  for (const statement of statements) await tx.executeQuery(statement);
}

/**
 * PostgreSQL: a fan-out's deliveries (an event's rows next to each other, each pending and due when
 * written) in one statement of arrays (fanOutInsertArrays). SQLite: insertDeliveriesNow.
 */
export function fanOutInserts(rows: Insertable<WebhookDeliveriesTable>[]): CompiledQuery[] {
  return rows.length === 0 ? [] : [fanOutInsertArrays(rows)];
}

export async function insertDelivery(tx: Kysely<DB>, row: Insertable<WebhookDeliveriesTable>): Promise<DeliveryRow> {
  return tx.insertInto('webhook_deliveries').values(row).returningAll().executeTakeFirstOrThrow();
}

// PostgreSQL advisory lock naming "the webhooks fan-out" (any constant; "oawh").
const PG_FAN_OUT_LOCK = 0x6f61_7768;

/** PostgreSQL: one node fans out at a time (transaction-scoped, keyed by schema like the relay's). */
export async function tryLockFanOut(tx: Kysely<DB>): Promise<boolean> {
  const lock = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${PG_FAN_OUT_LOCK}, hashtext(current_schema())) as locked`.execute(tx);
  return lock.rows[0]?.locked === true;
}

// ---- Delivery: leases, queue heads, attempts ------------------------------------------------------

export type ClaimedSubscription = Pick<SubscriptionRow, 'id' | 'url' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_until'>;

/**
 * Leases up to `limit` active subscriptions whose queue head is due to `owner` until `leaseUntil`,
 * in one statement (atomic on SQLite; on PostgreSQL the outer condition is re-checked on each row it
 * locks, so two nodes never both lease one). A queue without a known next attempt but with pending
 * deliveries (written by the fan-out) is due. An expired lease is taken over: its node died.
 */
export async function claimDueSubscriptions(db: Kysely<DB>, owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedSubscription[]> {
  const free = sql<boolean>`(lease_until is null or lease_until < ${now})`;
  const result = await sql<ClaimedSubscription>`
    update webhook_subscriptions set lease_owner = ${owner}, lease_until = ${leaseUntil}
    where id in (
      select s.id from webhook_subscriptions s
      where s.status = 'active' and (s.lease_until is null or s.lease_until < ${now})
        and (s.next_attempt_at <= ${now}
          or (s.next_attempt_at is null and exists (
            select 1 from webhook_deliveries d where d.subscription_id = s.id and d.status = 'pending')))
      order by s.id
      limit ${limit}
    ) and status = 'active' and ${free}
    returning id, url, secret_sealed, previous_secret_sealed, previous_secret_until`.execute(db);
  return result.rows;
}

/** Whether some queue could be claimed now (the claim's condition, read only). */
export async function anythingDue(db: Kysely<DB>, now: number): Promise<boolean> {
  const result = await sql<{ id: number }>`
    select s.id from webhook_subscriptions s
    where s.status = 'active' and (s.lease_until is null or s.lease_until < ${now})
      and (s.next_attempt_at <= ${now}
        or (s.next_attempt_at is null and exists (
          select 1 from webhook_deliveries d where d.subscription_id = s.id and d.status = 'pending')))
    limit 1`.execute(db);
  return result.rows.length > 0;
}

/** Extends the leases still held by `owner`, built ahead (see `run`); `runLeaseRenewal` answers those it still holds (lost: expired and taken over, or removed). */
export function leaseRenewal(db: Kysely<DB>, ids: number[], owner: string, leaseUntil: number): CompiledQuery<{ id: number }> {
  return db
    .updateTable('webhook_subscriptions')
    .set({ lease_until: leaseUntil })
    .where('id', 'in', [...new Set(ids)])
    .where('lease_owner', '=', owner)
    .where('status', '=', 'active')
    .returning('id')
    .compile();
}
export async function runLeaseRenewal(tx: Kysely<DB>, renewal: CompiledQuery<{ id: number }>): Promise<Set<number>> {
  const { rows } = await tx.executeQuery(renewal);
  return new Set(rows.map((r) => Number(r.id)));
}

/** Gives the queue back, due again at `nextAttemptAt` (null: whenever something is pending). */
export async function releaseLease(db: Kysely<DB>, id: number, owner: string, nextAttemptAt: number | null): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ lease_owner: null, lease_until: null, next_attempt_at: nextAttemptAt })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Leases held by any run of node `node` (owners are `<node>/<pid>/<incarnation>`). */
export async function leasesOfNode(db: Kysely<DB>, node: string): Promise<{ id: number; lease_owner: string }[]> {
  const rows = await db.selectFrom('webhook_subscriptions').select(['id', 'lease_owner']).where('lease_owner', 'like', `${node}/%`).execute();
  return rows.map((r) => ({ id: r.id, lease_owner: r.lease_owner! }));
}

export async function dropLeases(db: Kysely<DB>, ids: number[]): Promise<void> {
  if (ids.length > 0) await db.updateTable('webhook_subscriptions').set({ lease_owner: null, lease_until: null }).where('id', 'in', ids).execute();
}

export type QueueHead = DeliveryRow;

/** The oldest `limit` pending deliveries of a subscription, in order: nothing goes out before the first. */
export async function queueHeads(db: Kysely<DB>, subscriptionId: number, limit: number): Promise<QueueHead[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId).where('status', '=', 'pending').orderBy('id').limit(limit).execute();
}

export interface AttemptRecord {
  deliveryId: number;
  at: number;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  excerpt: string | null;
}

/** The attempts of a batch, in one statement per 500 (the delivery log). */
export async function insertAttempts(tx: Kysely<DB>, attempts: AttemptRecord[]): Promise<void> {
  await run(tx, attemptInserts(tx, attempts));
}
export function attemptInserts(db: Kysely<DB>, attempts: AttemptRecord[]): CompiledQuery[] {
  const rows = attempts.map((a) => ({ delivery_id: a.deliveryId, attempted_at: a.at, status_code: a.statusCode, error: a.error, latency_ms: a.latencyMs, response_excerpt: a.excerpt }));
  const statements: CompiledQuery[] = [];
  for (let i = 0; i < rows.length; i += 500) statements.push(db.insertInto('webhook_attempts').values(rows.slice(i, i + 500)).compile());
  return statements;
}

/**
 * PostgreSQL: a batch of attempts that all delivered (2xx), recorded in one statement — each
 * delivery marked delivered with its attempt (status code, latency, response excerpt) on its own
 * row instead of a log row in webhook_attempts (the mark rewrites that row anyway; attemptsOf reads
 * it back as the last attempt); answers the subscriptions of `renew` that `owner` still holds. Their
 * leases are extended to `leaseUntil` only where less than `renewBelow` is left: the dispatcher
 * records a batch every few milliseconds, and renewing on each wrote every queue's subscription row
 * again and again (a third of a row version per delivered message); so a held lease always has at
 * least until `renewBelow` after this. One statement is one transaction by itself: on a connection
 * that commits asynchronously (the dispatcher's) it needs no BEGIN and COMMIT either.
 *
 * Sent unnamed, so planned for each batch with its ids: a named statement's generic plan, made while
 * the table was small, joins the ids to a sequential scan of it, and would keep doing so as the table
 * grows until the next ANALYZE (bench/README.md, "fewer CPU per statement").
 */
export function deliveredRecord(attempts: AttemptRecord[], renew: number[], owner: string, leaseUntil: number, renewBelow: number, now: number): CompiledQuery<{ id: number }> {
  return CompiledQuery.raw(DELIVERED_RECORD, [
    now,
    attempts.map((a) => a.deliveryId),
    attempts.map((a) => a.statusCode),
    attempts.map((a) => a.latencyMs),
    attempts.map((a) => a.excerpt),
    [...new Set(renew)],
    owner,
    leaseUntil,
    renewBelow,
  ]) as CompiledQuery<{ id: number }>;
}
const DELIVERED_RECORD = `with marked as (
    update webhook_deliveries d set status = 'delivered', finished_at = $1, attempts = d.attempts + 1, last_status_code = v.code, last_error = null,
      delivered_latency_ms = v.latency, delivered_excerpt = v.excerpt
    from unnest($2::bigint[], $3::integer[], $4::integer[], $5::text[]) as v (id, code, latency, excerpt) where d.id = v.id
  ), renewed as (
    update webhook_subscriptions set lease_until = $8
    where id = any($6::bigint[]) and lease_owner = $7 and status = 'active' and lease_until < $9
  )
  select id from webhook_subscriptions where id = any($6::bigint[]) and lease_owner = $7 and status = 'active'`;

/**
 * `deliveredRecord` on SQLite, as statements of `writeInTurns`: each delivery marked delivered with
 * its attempt on its row (no webhook_attempts row: attemptsOf reads it back), the leases of `renew`
 * extended to `leaseUntil` where less than `renewBelow` is left; answers those `owner` still holds.
 */
export function deliveredNow(tx: StraightStatements, attempts: AttemptRecord[], renew: number[], owner: string, leaseUntil: number, renewBelow: number, now: number): Set<number> {
  // A statement per row: one for all (UPDATE … FROM json_each) took longer per row.
  for (const a of attempts) {
    tx.run(
      `update webhook_deliveries set status = 'delivered', finished_at = ?, attempts = attempts + 1, last_status_code = ?, last_error = null,
        delivered_latency_ms = ?, delivered_excerpt = ? where id = ?`,
      [now, a.statusCode, a.latencyMs, a.excerpt, a.deliveryId],
    );
  }
  // Read first: a lease is extended only once less than `renewBelow` is left, which most records find it is not.
  const held = tx.all<{ id: number; renew: number }>(
    `select id, lease_until < ? as renew from webhook_subscriptions where id in (select value from json_each(?)) and lease_owner = ? and +status = 'active'`,
    [renewBelow, JSON.stringify([...new Set(renew)]), owner],
  );
  const due = held.filter((h) => h.renew);
  if (due.length > 0) tx.run(`update webhook_subscriptions set lease_until = ? where id in (select value from json_each(?))`, [leaseUntil, JSON.stringify(due.map((h) => h.id))]);
  return new Set(held.map((h) => h.id));
}

/**
 * PostgreSQL: the deliveries of a fan-out batch in one statement, each event's message id, type and
 * body once and per delivery its subscription and event, as arrays: one text for every batch, so a
 * named statement, parsed once per connection and soon run on a generic plan — planning a `values`
 * list of hundreds of rows, with a new text for each length, was about 40 % of the insert's CPU. The plan
 * reads no table (the arrays alone), so a generic one cannot go bad as the tables grow. Rows are
 * inserted, and so numbered, in the order given — each subscription's in event order — which the
 * ORDER BY on the arrays' ordinality states: without it a function scan's row order holds in
 * practice but is not promised, and the queue delivers by id.
 *
 * `rows` are a fan-out's (fanOutInserts): an event's rows next to each other, all pending and due
 * when written (the first row's `created_at` stands for all).
 */
function fanOutInsertArrays(rows: Insertable<WebhookDeliveriesTable>[]): CompiledQuery {
  const subscriptions: number[] = [];
  const eventOf: number[] = [];
  const messageIds: string[] = [];
  const eventTypes: string[] = [];
  const bodies: string[] = [];
  for (const row of rows) {
    if (messageIds.at(-1) !== row.message_id) {
      messageIds.push(row.message_id);
      eventTypes.push(row.event_type);
      bodies.push(row.body);
    }
    subscriptions.push(row.subscription_id);
    eventOf.push(messageIds.length);
  }
  return prepared(CompiledQuery.raw(DELIVERY_INSERT, [subscriptions, eventOf, messageIds, eventTypes, bodies, rows[0]!.created_at]));
}
const DELIVERY_INSERT = `insert into webhook_deliveries (subscription_id, message_id, event_type, body, status, next_attempt_at, window_start, created_at)
  select r.subscription_id, ($3::text[])[r.event], ($4::text[])[r.event], ($5::text[])[r.event], 'pending', $6, $6, $6
  from unnest($1::bigint[], $2::integer[]) with ordinality as r (subscription_id, event, n)
  order by r.n`;

/** Deliveries whose attempt just got `statusCode` (2xx): delivered, one statement for all of them. */
export function deliveredMark(db: Kysely<DB>, ids: number[], statusCode: number, now: number): CompiledQuery {
  return db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ status: 'delivered' as const, finished_at: now, attempts: eb('attempts', '+', 1), last_status_code: statusCode, last_error: null }))
    .where('id', 'in', ids)
    .compile();
}

/** A delivery's state after an attempt that did not deliver it. */
export async function setDeliveryOutcome(
  tx: Kysely<DB>,
  a: Pick<AttemptRecord, 'deliveryId' | 'statusCode' | 'error'>,
  outcome: { status: 'failed' | 'cancelled'; at: number } | { status: 'pending'; nextAttemptAt: number },
): Promise<void> {
  const values = outcome.status === 'pending' ? { status: 'pending' as const, next_attempt_at: outcome.nextAttemptAt } : { status: outcome.status, finished_at: outcome.at };
  await tx
    .updateTable('webhook_deliveries')
    .set((eb) => ({ ...values, attempts: eb('attempts', '+', 1), last_status_code: a.statusCode, last_error: a.error }))
    .where('id', '=', a.deliveryId)
    .execute();
}

// ---- The delivery log ----------------------------------------------------------------------------

export async function deliveriesOf(db: Kysely<DB>, subscriptionId: number, limit: number): Promise<DeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId).orderBy('id', 'desc').limit(limit).execute();
}

/**
 * One page of a subscription's deliveries, newest first, optionally in one state, with the total.
 * The rows and the total come from one statement (a window count), so a delivery the dispatcher
 * records meanwhile cannot make them disagree. An empty first page is that same read saying there
 * are none; only a page past the end has to count on its own, and it has no rows to disagree with.
 */
export async function deliveryPage(db: Kysely<DB>, subscriptionId: number, status: DeliveryRow['status'] | null, limit: number, offset: number): Promise<{ rows: DeliveryRow[]; total: number }> {
  let query = db.selectFrom('webhook_deliveries').where('subscription_id', '=', subscriptionId);
  if (status) query = query.where('status', '=', status);
  const found = await query
    .selectAll()
    .select((eb) => eb.fn.countAll<number | string>().over().as('page_total'))
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  if (found.length === 0) {
    if (offset === 0) return { rows: [], total: 0 };
    const count = await query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return { rows: [], total: Number(count.n) };
  }
  const total = Number(found[0]!.page_total);
  const rows = found.map(({ page_total: _total, ...row }) => row);
  return { rows, total };
}

/** A logged attempt: a webhook_attempts row, or the delivering attempt kept on its delivery row. */
export type LoggedAttempt = Omit<AttemptRow, 'id'>;

/**
 * The attempts of these deliveries, each delivery's in order: its webhook_attempts rows, then the
 * attempt that delivered it if that one is kept on the delivery row (deliveredRecord; it is always
 * the last). Both forms are read: a node of the previous version, or a batch with a failure in it,
 * writes attempt rows.
 */
export async function attemptsOf(db: Kysely<DB>, deliveryIds: number[]): Promise<LoggedAttempt[]> {
  if (deliveryIds.length === 0) return [];
  const [rows, delivered] = await Promise.all([
    db.selectFrom('webhook_attempts').select(['delivery_id', 'attempted_at', 'status_code', 'error', 'latency_ms', 'response_excerpt']).where('delivery_id', 'in', deliveryIds).orderBy('id').execute(),
    db
      .selectFrom('webhook_deliveries')
      .select(['id', 'finished_at', 'last_status_code', 'delivered_latency_ms', 'delivered_excerpt'])
      .where('id', 'in', deliveryIds)
      .where('delivered_latency_ms', 'is not', null)
      .execute(),
  ]);
  const attempts: LoggedAttempt[] = rows;
  for (const d of delivered) {
    attempts.push({ delivery_id: d.id, attempted_at: d.finished_at!, status_code: d.last_status_code, error: null, latency_ms: d.delivered_latency_ms!, response_excerpt: d.delivered_excerpt });
  }
  return attempts;
}

export async function findDelivery(db: Kysely<DB>, id: number): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

// ---- Pruning (WEBHOOKS_LOG_RETENTION) --------------------------------------------------------------

/** Up to `limit` deliveries that finished before `before`, oldest first (index webhook_deliveries_finished). */
export async function finishedDeliveriesBefore(db: Kysely<DB>, before: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('finished_at', '<', before)
    .where('status', '!=', 'pending')
    .orderBy('finished_at')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** Deletes these deliveries and their attempts. */
export async function deleteDeliveries(tx: Kysely<DB>, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
  await tx.deleteFrom('webhook_deliveries').where('id', 'in', ids).where('status', '!=', 'pending').execute();
}

/** Removed subscriptions whose log is gone, removed before `before`: nothing refers to them any more. */
export async function deleteRemovedSubscriptions(db: Kysely<DB>, before: number): Promise<number> {
  const result = await db
    .deleteFrom('webhook_subscriptions')
    .where('status', '=', 'removed')
    .where('status_at', '<', before)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.subscription_id', '=', 'webhook_subscriptions.id'))))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Every delivery of a subscription in id order (tests, inspection). */
export async function allDeliveriesOf(db: Kysely<DB>, subscriptionId: number): Promise<DeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId).orderBy('id').execute();
}
