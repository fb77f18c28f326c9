import { sql, type CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { WebhooksConfig } from '../../config/config.js';
import { SQLITE_SYNCHRONOUS, writeInTurns, type Database, type TurnGroup } from '../../db/database.js';
import { CommitWokenLoop } from '../../db/commit-woken-loop.js';
import type { DB } from '../../db/schema.js';
import { decryptSecret } from '../../security/crypto.js';
import { webhookHeaders } from '../../security/standard-webhooks.js';
import type { ClaimOwner } from '../outbox/claim-owner.js';
import { postJson, ReceiverAgents, systemResolver, type Resolver, type SendResult } from './endpoint.js';
import { GroupCommit, type ItemOutcome } from '../../db/group-commit.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ownedItem, webhookData, type OwnedItem } from './webhook-events.js';
import * as repo from './webhooks.repository.js';
import type { WebhookDeliveriesTable } from './webhooks.table.js';

type Logger = { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };

export interface DispatcherOptions {
  config: WebhooksConfig;
  encryptionKey: Buffer;
  owner: ClaimOwner;
  logger?: Logger;
  /** Idle poll: events written by other processes, and retries coming due. */
  pollMs?: number;
  /** Subscriptions delivered to at once by this node (each one's queue strictly in order). */
  concurrency?: number;
}

// Events per fan-out transaction: 50 events × 10 subscriptions is 500 rows, a few milliseconds of the
// event loop (SQLite is synchronous); a backlog goes in such slices, requests running in between.
const FAN_OUT_BATCH = 50;
const QUEUE_PAGE = 50;
// Deliveries written, and attempts recorded, per group of statements in a dispatcher transaction:
// between groups a request waiting for the write lock (SQLite) goes first (#bookkeeping's
// turnOver), so it waits for one group's statements, not for the whole transaction.
const FAN_OUT_GROUP_ROWS = 20;
const RECORD_GROUP = 8;
const MAX_BACKOFF_MS = 3600_000;
const RECORD_GATHER_MS = 10;
/**
 * Attempts a queue may have answered and not yet recorded (#deliverQueue): what a crash can make it
 * send twice, at most.
 */
export const MAX_UNRECORDED = 8;
/**
 * The share of a lease a record leaves at least: on PostgreSQL a delivered record renews a lease only
 * once less than this is left (repo.deliveredRecord). Longer than an attempt can take, so a queue
 * never stops for a lease it holds (leaseTooShort in #deliverQueue): 3/4 of 3 × timeout + 5 s.
 */
const LEASE_KEPT = 0.75;
/** How long a queue that ran empty keeps its lease, waiting for the next event (see #deliverQueue). */
const LINGER_MS = 2_000;

/**
 * Delivers webhooks from the outbox, never from a request (issue 11):
 *
 * 1. Fan-out. Outbox rows not yet read (`outbox.webhooks_at` null) become one delivery row per
 *    active subscription that wants them, in the transaction that marks them read (read and built
 *    before it, checked in it); one node at a time (SQLite: the write lock of BEGIN IMMEDIATE;
 *    PostgreSQL: an advisory lock).
 * 2. Delivery. A node leases a subscription whose queue head is due (a row lease in the database:
 *    one node delivers a subscription at a time, on either dialect) and sends its queue in id order,
 *    one request at a time: a delivery that fails holds the ones behind it, so receivers see each
 *    subscription's events in order. 2xx delivers; 410 Gone removes the subscription; anything else
 *    (network error, timeout, redirect, other status) retries with exponential backoff and jitter
 *    until the retry window is over, which disables the subscription (the dashboard says so).
 *
 * At least once: the attempt is recorded after the response, so a crash in between sends again
 * (with the same `webhook-id`). A restarted node releases the leases its dead process held at once;
 * another node's leases expire after LEASE_MS.
 */
export class WebhookDispatcher {
  /** DNS as the SSRF guard sees it (tests point names elsewhere). */
  resolver: Resolver = systemResolver;
  readonly #database: Database;
  readonly #opts: Required<Omit<DispatcherOptions, 'logger'>> & Pick<DispatcherOptions, 'logger'>;
  readonly #inFlight = new Map<number, Promise<void>>();
  readonly #loop: CommitWokenLoop;
  /** Keep-alive connections, per checked address. */
  readonly #agents = new ReceiverAgents();
  /** Queues waiting with an empty queue and their lease (see #deliverQueue), by subscription. */
  readonly #idlers = new Map<number, () => void>();
  /** Queues with messages to send now (not lingering with an empty queue), by subscription. */
  readonly #sending = new Set<number>();
  // Attempts of every queue ending within RECORD_GATHER_MS share a transaction: on SQLite each is
  // a turn of the write lock, which a donation's commit may have to wait for. No queue waits for
  // each record to send its next message (#deliverQueue), but one waits for its records every
  // MAX_UNRECORDED attempts: a lone sending queue's are not gathered (those that end while one is
  // written go into the next), so its pace stays its receiver's; lingering queues do not count.
  readonly #records = new GroupCommit<AttemptOutcome, boolean>((items) => this.#recordBatch(items), {
    maxBatch: 128,
    gatherMs: () => (this.#sending.size > 1 ? RECORD_GATHER_MS : 0),
  });
  #recovered = false;
  /**
   * PostgreSQL: this connection's session commits asynchronously (the dispatcher thread opens its
   * database so): a write of one statement then runs by itself, without BEGIN, SET LOCAL, COMMIT.
   */
  #asyncSession = false;
  /** How many times this node's fan-out queued deliveries for each subscription (see #deliverQueue). */
  readonly #fannedOut = new Map<number, number>();

  constructor(database: Database, opts: DispatcherOptions) {
    this.#database = database;
    this.#opts = { pollMs: 250, concurrency: 16, ...opts };
    this.#loop = new CommitWokenLoop(database, {
      pollMs: this.#opts.pollMs,
      round: () => this.#round(),
      onError: (err) => this.#opts.logger?.error({ err }, 'webhooks: a dispatch round failed; will retry'),
    });
  }

  get #leaseMs(): number {
    // Longer than one attempt can take, so a live node never loses its lease mid-request.
    return this.#opts.config.timeoutMs * 3 + 5_000;
  }

  /**
   * Starts dispatching. `'poll'`: the first round is the first poll (250 ms later) instead of
   * one now — a starting server answers its first requests before it looks for deliveries; a
   * commit in between wakes the dispatcher at once as always.
   */
  async start(firstRound: 'now' | 'poll' = 'now'): Promise<void> {
    await this.#loop.start(firstRound);
  }

  kick(): void {
    this.#loop.kick();
  }

  /** Stops claiming; waits for the requests under way (each ends within the timeout). */
  async stop(): Promise<void> {
    await this.#loop.stop();
    this.#wake([...this.#idlers.keys()]);
    await Promise.all(this.#inFlight.values());
    this.#agents.destroy();
  }

  async #round(): Promise<void> {
    if (!this.#recovered) {
      if (this.#database.dialect === 'postgres') {
        const setting = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(this.#database.db);
        this.#asyncSession = setting.rows[0]?.synchronous_commit === 'off';
      }
      await this.#releaseDeadLeases();
      this.#recovered = true;
    }
    // Between batches, a turn of the event loop: on SQLite every statement is synchronous, and a
    // backlog of fan-out batches would otherwise hold requests up until it is all read.
    while ((await this.fanOut()) === FAN_OUT_BATCH) await yieldToLoop();
    await this.#claimAndDeliver();
  }

  /** Leases of this node's dead processes (kill -9) go back at once instead of after LEASE_MS. */
  async #releaseDeadLeases(): Promise<void> {
    const held = await repo.leasesOfNode(this.#database.db, this.#opts.owner.node);
    const dead = held.filter((l) => this.#opts.owner.ownsDeadClaim(l.lease_owner));
    await repo.dropLeases(this.#database.db, dead.map((l) => l.id));
    if (dead.length > 0) this.#opts.logger?.warn({ subscriptions: dead.length }, 'webhooks: resuming the deliveries an earlier run of this node left under way');
  }

  /** One fan-out batch; returns how many outbox rows it read. Exposed for tests. */
  async fanOut(): Promise<number> {
    const db = this.#database.db;
    // Every commit wakes us; most find nothing new that is due: the plan's first read says so, and
    // no transaction (no write lock) follows.
    for (let attempt = 1; ; attempt++) {
      const now = Date.now();
      const plan = await this.#planFanOut(db, now);
      if (plan.events.length === 0) return 0;
      const queued = new Set<number>();
      try {
        if (this.#database.dialect === 'sqlite') {
          await writeInTurns(db, this.#sqliteFanOut(plan, now), (committed) => {
            for (const group of plan.groups.slice(0, committed)) for (const id of group.subscriptionIds) queued.add(id);
          });
          return plan.events.length;
        }
        return await this.#bookkeeping(async (tx) => {
          if (!(await repo.tryLockFanOut(tx))) return 0;
          // Read again in the transaction (one short indexed read): a subscription made, removed or
          // disabled since the plan changes who gets what, and then the rows are built again here.
          const subscriptions = await repo.activeSubscriptionsOf(tx, plan.userIds);
          const groups = sameSubscriptions(subscriptions, plan.subscriptions) ? plan.groups : this.#fanOutGroups(plan, subscriptions, now);
          for (const group of groups) {
            // Read before the transaction: another node may have fanned them out meanwhile; then the plan is read again.
            if (!(await repo.markFannedOutIfUnread(tx, group.eventIds, now))) throw new StaleFanOut();
            await repo.run(tx, repo.fanOutInserts(group.rows));
            for (const id of group.subscriptionIds) queued.add(id);
          }
          return plan.events.length;
        });
      } catch (err) {
        if (!(err instanceof StaleFanOut)) throw err;
        if (attempt >= 2) return 0;
      } finally {
        // Committed (or the groups before a failure were): the queues of this node waiting for more go on now.
        for (const id of queued) this.#fannedOut.set(id, (this.#fannedOut.get(id) ?? 0) + 1);
        this.#wake(queued);
      }
    }
  }

  /**
   * SQLite: the plan's groups as `writeInTurns` writes them. Each marks its own events read with its
   * deliveries, so a turn over between groups commits nothing half done. The first reads the
   * subscriptions again (one short indexed read): one made, removed or disabled since the plan
   * changes who gets what, and then the plan is made again.
   */
  #sqliteFanOut(plan: FanOutPlan, now: number): TurnGroup[] {
    return plan.groups.map((group, i) => (tx) => {
      if (i === 0 && !sameSubscriptions(repo.activeSubscriptionsNow(tx, plan.userIds), plan.subscriptions)) throw new StaleFanOut();
      // Another process on the file fanned them out since the plan read them.
      if (!repo.markFannedOutNow(tx, group.eventIds, now)) throw new StaleFanOut();
      repo.insertDeliveriesNow(tx, group.rows);
    });
  }

  /**
   * A fan-out batch worked out before its transaction: the events and subscriptions read, each
   * delivery's body and row built. On SQLite the write lock, which a request's
   * commit may be waiting for, is then held for the writes alone.
   */
  async #planFanOut(db: Kysely<DB>, now: number): Promise<FanOutPlan> {
    const events = await repo.eventsToFanOut(db, FAN_OUT_BATCH, now);
    const userIds = [...new Set(events.map((e) => e.user_id).filter((id): id is number => id !== null))];
    const subscriptions = await repo.activeSubscriptionsOf(db, userIds);
    // Nobody subscribed (the rows are only marked read): nothing to parse or build.
    const parsed = subscriptions.length === 0 ? [] : events.map((e) => ({ event: e, data: webhookData(e.type, JSON.parse(e.payload)) }));
    const owned = parsed.map((p) => ownedItem(p.event.type, p.data));
    const owners = await this.#owners(db, owned);
    const bodies = parsed.map(({ event, data }) => JSON.stringify({ type: event.type, timestamp: new Date(Number(event.created_at)).toISOString(), data }));
    const plan: FanOutPlan = { events, userIds, subscriptions, bodies, owned, owners, groups: [] };
    plan.groups = this.#fanOutGroups(plan, subscriptions, now);
    return plan;
  }

  /** The plan's events, in order, in groups of about FAN_OUT_GROUP_ROWS deliveries (SQLite), with their rows. */
  #fanOutGroups(plan: FanOutPlan, subscriptions: readonly repo.FanOutSubscription[], now: number): FanOutGroup[] {
    const wanted = subscriptions.map((s) => ({ ...s, events: new Set<string>(JSON.parse(s.events)) }));
    // Groups are for the threads' write lock (SQLite); PostgreSQL has none: one mark and one insert.
    const groupRows = this.#database.threadLock ? FAN_OUT_GROUP_ROWS : Infinity;
    const groups: FanOutGroup[] = [];
    let eventIds: number[] = [];
    let rows: Insertable<WebhookDeliveriesTable>[] = [];
    const close = () => {
      groups.push({ eventIds, rows, subscriptionIds: new Set(rows.map((r) => r.subscription_id)) });
      eventIds = [];
      rows = [];
    };
    plan.events.forEach((event, i) => {
      const item = plan.owned[i] ?? null;
      const eventRows: Insertable<WebhookDeliveriesTable>[] = [];
      for (const sub of wanted) {
        // Never an event from before the subscription (read late: the dispatcher thread starts with
        // the first subscription, and the outbox keeps what came before it for a while).
        if (sub.user_id !== event.user_id || !sub.events.has(event.type) || Number(event.created_at) < sub.created_at) continue;
        if (item && plan.owners.get(`${item.kind}:${item.id}`) !== sub.app_id) continue;
        eventRows.push({ subscription_id: sub.id, message_id: `msg_${event.id}`, event_type: event.type, body: plan.bodies[i]!, status: 'pending', next_attempt_at: now, window_start: now, created_at: now });
      }
      if (eventIds.length > 0 && rows.length + eventRows.length > groupRows) close();
      eventIds.push(event.id);
      rows.push(...eventRows);
    });
    if (eventIds.length > 0) close();
    return groups;
  }

  /**
   * One transaction of the dispatcher's own, begun and committed as plain statements on a held
   * connection: only transactions run through Kysely signal commits, and ours must wake neither
   * the relay nor this dispatcher. It skips the fsync (SQLite: synchronous NORMAL, as the relay's
   * bookkeeping does; PostgreSQL: synchronous_commit off): a power cut can lose only a fan-out
   * (redone, its outbox marks are in the same transaction), a lease change (it expires), or an
   * attempt's record (the message is sent again — at least once, as promised).
   *
   * `fn` gets `turnOver`, to call between groups of its writes that each stand on their own (an
   * attempt group records its own attempts): on SQLite, when a request waits for the threads' write
   * lock, what is written commits there and the rest follows in a new transaction after the
   * request's — the request waits for one group, not for the whole transaction. Everything else
   * (reads, bodies, statements) is done before the transaction. SQLite's fan-out and all-delivered
   * records, most of the dispatcher's writes, go by `writeInTurns` instead, which does the same
   * without an await between statements.
   */
  async #bookkeeping<T>(fn: (db: Kysely<DB>, turnOver: (committed?: () => void) => Promise<void>) => Promise<T>): Promise<T> {
    const sqlite = this.#database.dialect === 'sqlite';
    const lock = this.#database.threadLock;
    return this.#database.db.connection().execute(async (db) => {
      if (sqlite) await sql`pragma synchronous = NORMAL`.execute(db);
      // Called between two groups of statements, each whole on its own: if a request is waiting for
      // the write lock (SQLite), commit what is written, let the request go first (BEGIN takes the
      // lock again only once no request waits), and go on in a new transaction.
      const turnOver = async (committed?: () => void) => {
        if (!lock?.priorityWaiting()) return;
        await sql`commit`.execute(db);
        committed?.();
        lock.turnedOver();
        await sql`begin immediate`.execute(db);
      };
      try {
        await sql.raw(sqlite ? 'begin immediate' : 'begin').execute(db);
        try {
          // PostgreSQL: the same bargain as SQLite's NORMAL — the commit does not wait for its WAL
          // flush (a crash can lose only what is redone or re-sent), and the donation requests'
          // commits do not queue behind ours at the disk.
          if (!sqlite && !this.#asyncSession) await sql`set local synchronous_commit = off`.execute(db);
          const result = await fn(db, turnOver);
          await sql`commit`.execute(db);
          return result;
        } catch (err) {
          await sql`rollback`.execute(db).catch(() => {});
          throw err;
        }
      } finally {
        if (sqlite) await sql.raw(`pragma synchronous = ${SQLITE_SYNCHRONOUS}`).execute(db);
      }
    });
  }

  /**
   * A write of one statement, with #bookkeeping's bargain: on PostgreSQL with an asynchronously
   * committing session (the dispatcher thread's) it runs by itself — one round trip instead of four.
   */
  async #write<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    if (this.#asyncSession) return fn(this.#database.db);
    return this.#bookkeeping((db) => fn(db));
  }

  /** `<kind>:<id>` → the owning application, for the custom alerts and sales among the events. */
  async #owners(tx: Kysely<DB>, items: (OwnedItem | null)[]): Promise<Map<string, number>> {
    const ids = (kind: OwnedItem['kind']) => [...new Set(items.filter((i): i is OwnedItem => i?.kind === kind).map((i) => i.id))];
    const [alerts, sales] = await Promise.all([repo.customAlertSenders(tx, ids('custom_alert')), repo.saleApps(tx, ids('sale'))]);
    const owners = new Map<string, number>();
    for (const [id, app] of alerts) owners.set(`custom_alert:${id}`, app);
    for (const [id, app] of sales) owners.set(`sale:${id}`, app);
    return owners;
  }

  async #claimAndDeliver(): Promise<void> {
    const room = this.#opts.concurrency - this.#inFlight.size;
    if (room <= 0) return;
    const now = Date.now();
    if (!(await repo.anythingDue(this.#database.db, now))) return;
    const claimed = await this.#write((db) => repo.claimDueSubscriptions(db, this.#opts.owner.id, now, now + this.#leaseMs, room));
    for (const sub of claimed) {
      const work = this.#deliverQueue(sub, now)
        .catch((err) => this.#opts.logger?.error({ err, subscription: sub.id }, 'webhooks: delivering a queue failed; its lease expires and it resumes'))
        .finally(() => {
          this.#sending.delete(sub.id);
          this.#inFlight.delete(sub.id);
          this.kick();
        });
      this.#inFlight.set(sub.id, work);
    }
  }

  /**
   * Sends a leased subscription's queue in order until it is empty, a delivery fails, or we stop.
   * An empty queue keeps its lease a little while (LINGER_MS, well inside the lease): under a steady
   * trickle of events the next ones come within it, and the queue goes on without a claim and a
   * release — two write transactions per event per subscription otherwise, each of which a donation's
   * commit would wait behind. This node's fan-out wakes it at once; other nodes' rows are found by a
   * read every poll.
   *
   * One request at a time, in order; the next is sent once the last one answered 2xx, without waiting
   * for its record: attempts are recorded together (#records, gathered RECORD_GATHER_MS across every
   * queue), so the dispatcher writes a few transactions a second, not one per delivery — each a turn
   * of SQLite's one writer that a donation's commit may wait for. At most MAX_UNRECORDED attempts
   * wait for their record, and a page's records are all committed before the queue is read again;
   * a failure stops the queue at once and its record schedules the retry. A crash re-sends what was
   * answered but not yet recorded (at least once, with the same webhook-id).
   */
  async #deliverQueue(sub: repo.ClaimedSubscription, claimedAt: number): Promise<void> {
    const db = this.#database.db;
    const owner = this.#opts.owner.id;
    const secrets = this.#secretsOf(sub);
    let leaseUntil = claimedAt + this.#leaseMs;
    let idleSince: number | null = null;
    // Records under way: each renews the lease (or finds it lost) when its batch commits.
    const recording: Promise<void>[] = [];
    let lost = false;
    let recordFailure: unknown = null;
    const record = (attempt: AttemptOutcome) => {
      const from = Date.now();
      const recorded = this.#records.submit(attempt).then(
        (held) => {
          // A held lease runs at least LEASE_KEPT of a lease past the record (repo.deliveredRecord).
          if (held) leaseUntil = Math.max(leaseUntil, from + this.#leaseMs * LEASE_KEPT);
          else lost = true;
        },
        (err: unknown) => {
          recordFailure ??= err;
          lost = true;
        },
      );
      recording.push(recorded);
    };
    const recorded = async () => {
      await Promise.all(recording.splice(0));
      if (recordFailure) throw recordFailure;
    };
    // Never send on a lease that could run out before the attempt ends.
    const leaseTooShort = () => Date.now() + this.#opts.config.timeoutMs + 1000 >= leaseUntil;
    // This node's fan-out count for the queue when a short page (the whole queue) was sent: until it
    // changes, a read would find nothing new but other nodes' rows, which the idle poll's read finds.
    let sentAll: number | null = null;
    for (;;) {
      // A page of the queue at a time, read once every attempt sent from the last one is recorded.
      const fannedOut = this.#fannedOut.get(sub.id) ?? 0;
      const queue = sentAll === fannedOut ? [] : await repo.queueHeads(db, sub.id, QUEUE_PAGE);
      sentAll = null;
      if (queue.length === 0) {
        this.#sending.delete(sub.id);
        const now = Date.now();
        idleSince ??= now;
        if (this.#loop.stopped || now - idleSince >= LINGER_MS || leaseTooShort()) {
          return this.#write((tx) => repo.releaseLease(tx, sub.id, owner, null));
        }
        await this.#idle(sub.id, this.#opts.pollMs);
        continue;
      }
      idleSince = null;
      this.#sending.add(sub.id);
      for (const head of queue) {
        if (recording.length >= MAX_UNRECORDED || leaseTooShort()) await recorded();
        if (lost) return recorded();
        if (head.next_attempt_at > Date.now() || this.#loop.stopped || leaseTooShort()) {
          await recorded();
          return this.#write((tx) => repo.releaseLease(tx, sub.id, owner, head.next_attempt_at));
        }
        const timestamp = Math.floor(Date.now() / 1000);
        const result = await postJson(sub.url, webhookHeaders(secrets, head.message_id, timestamp, head.body), head.body, {
          timeoutMs: this.#opts.config.timeoutMs,
          policy: { allowLoopback: this.#opts.config.allowHttp },
          resolver: this.resolver,
          agents: this.#agents,
        });
        record({ subscriptionId: sub.id, head, result });
        // Not delivered: its record gives the lease back with the retry's time (or ends the subscription).
        if (!isDelivered(result.statusCode)) return recorded();
      }
      await recorded();
      if (lost) return;
      if (queue.length < QUEUE_PAGE) sentAll = fannedOut;
    }
  }

  /** Waits up to `ms` for this node's fan-out to queue something for the subscription. */
  #idle(subscriptionId: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idlers.delete(subscriptionId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#idlers.set(subscriptionId, done);
    });
  }

  #wake(subscriptionIds: Iterable<number>): void {
    for (const id of subscriptionIds) this.#idlers.get(id)?.();
  }

  /** Newest first: the current secret, then the previous one while its overlap lasts. */
  #secretsOf(sub: repo.ClaimedSubscription): string[] {
    const key = this.#opts.encryptionKey;
    const secrets = [decryptSecret(key, sub.secret_sealed)];
    if (sub.previous_secret_sealed && (sub.previous_secret_until ?? 0) > Date.now()) secrets.push(decryptSecret(key, sub.previous_secret_sealed));
    return secrets;
  }

  /**
   * Records the attempts that ended since the last flush, of every queue, in one transaction (one
   * commit for many deliveries: the donation requests' writes wait behind fewer of ours), each with
   * what follows: on success the lease is renewed (true: the queue goes on); otherwise the lease is
   * given back with the time of the retry, or the subscription leaves `active` (410 Gone, retry
   * window over). False: that queue stops here. Several attempts of one queue may share a batch
   * (#deliverQueue sends on before its records commit); a failure is always its queue's last.
   */
  async #recordBatch(items: readonly AttemptOutcome[]): Promise<ItemOutcome<boolean>[]> {
    const now = Date.now();
    const owner = this.#opts.owner.id;
    const db = this.#database.db;
    const leaseUntil = now + this.#leaseMs;
    const renewBelow = now + this.#leaseMs * LEASE_KEPT;
    if (items.every((i) => isDelivered(i.result.statusCode))) {
      // The usual batch: all delivered. The marks, each with its attempt, and the lease renewal.
      if (this.#database.dialect === 'postgres') {
        const record = repo.deliveredRecord(items.map(attemptRecord(now)), items.map((i) => i.subscriptionId), owner, leaseUntil, renewBelow, now);
        const held = await this.#write((tx) => repo.runLeaseRenewal(tx, record));
        return items.map((i) => ({ ok: true, value: held.has(i.subscriptionId) }));
      }
      // SQLite: in groups, between which a waiting request goes first (writeInTurns).
      const outcomes: ItemOutcome<boolean>[] = [];
      const groups: TurnGroup[] = [];
      for (let i = 0; i < items.length; i += RECORD_GROUP) {
        const group = items.slice(i, i + RECORD_GROUP);
        groups.push((tx) => {
          const held = repo.deliveredNow(tx, group.map(attemptRecord(now)), group.map((g) => g.subscriptionId), owner, leaseUntil, renewBelow, now);
          // Lost (expired and taken over, or the subscription was removed meanwhile): that queue stops.
          for (const g of group) outcomes.push({ ok: true, value: held.has(g.subscriptionId) });
        });
      }
      let committed = 0;
      try {
        await writeInTurns(db, groups, (groupsCommitted) => (committed = Math.min(items.length, groupsCommitted * RECORD_GROUP)));
      } catch (err) {
        if (committed === 0) throw err;
        // The groups committed before a turn over stand; the rest goes into the next batch.
        return [...outcomes.slice(0, committed), ...items.slice(committed).map((): ItemOutcome<boolean> => ({ retry: true }))];
      }
      return outcomes;
    }
    // Groups are for the threads' write lock (SQLite); PostgreSQL has none.
    const groupSize = this.#database.threadLock ? RECORD_GROUP : items.length;
    // Statements built before the transaction (repo.run), in groups between which a waiting request goes first.
    const groups: RecordGroup[] = [];
    for (let i = 0; i < items.length; i += groupSize) {
      const group = items.slice(i, i + groupSize);
      const delivered = group.filter((g) => isDelivered(g.result.statusCode));
      groups.push({
        items: group,
        attempts: repo.attemptInserts(db, group.map(attemptRecord(now))),
        marks: [...new Set(delivered.map((g) => g.result.statusCode!))].map((code) => repo.deliveredMark(db, delivered.filter((g) => g.result.statusCode === code).map((g) => g.head.id), code, now)),
        renewal: delivered.length > 0 ? repo.leaseRenewal(db, delivered.map((g) => g.subscriptionId), owner, leaseUntil) : null,
      });
    }
    const outcomes: ItemOutcome<boolean>[] = [];
    let committed = 0;
    try {
      await this.#bookkeeping(async (tx, turnOver) => {
        for (const [i, group] of groups.entries()) {
          if (i > 0) await turnOver(() => (committed = outcomes.length));
          await repo.run(tx, group.attempts);
          await repo.run(tx, group.marks);
          // Lost (expired and taken over, or the subscription was removed meanwhile): that queue stops.
          const held = group.renewal ? await repo.runLeaseRenewal(tx, group.renewal) : new Set<number>();
          for (const { subscriptionId, head, result } of group.items) {
            outcomes.push({ ok: true, value: isDelivered(result.statusCode) ? held.has(subscriptionId) : await this.#recordFailure(tx, subscriptionId, head, result, now) });
          }
        }
      });
    } catch (err) {
      if (committed === 0) throw err;
      // The groups committed before a turn over stand; the rest goes into the next batch.
      return [...outcomes.slice(0, committed), ...items.slice(committed).map((): ItemOutcome<boolean> => ({ retry: true }))];
    }
    return outcomes;
  }

  /** What follows an attempt that did not deliver: a retry later, or the subscription leaves `active`. Always false. */
  async #recordFailure(tx: Kysely<DB>, subscriptionId: number, head: repo.QueueHead, result: SendResult, now: number): Promise<false> {
    const owner = this.#opts.owner.id;
    const attempt = { deliveryId: head.id, statusCode: result.statusCode, error: result.error };
    if (result.statusCode === 410) {
      // The receiver says the endpoint is gone for good (as Stripe and Svix treat it): unsubscribe.
      await repo.setDeliveryOutcome(tx, attempt, { status: 'cancelled', at: now });
      await repo.removeSubscription(tx, subscriptionId, 'gone', now);
      this.#opts.logger?.info({ subscription: subscriptionId }, 'webhooks: the endpoint answered 410 Gone; subscription removed');
      return false;
    }
    const retryAt = now + backoffMs(head.attempts + 1, this.#opts.config.retryBaseMs);
    if (retryAt - head.window_start > this.#opts.config.retryWindowMs) {
      await repo.setDeliveryOutcome(tx, attempt, { status: 'failed', at: now });
      await repo.disableSubscription(tx, subscriptionId, 'retries_exhausted', now);
      await repo.releaseLease(tx, subscriptionId, owner, null);
      this.#opts.logger?.warn({ subscription: subscriptionId }, 'webhooks: retries exhausted; subscription disabled until re-enabled');
      return false;
    }
    await repo.setDeliveryOutcome(tx, attempt, { status: 'pending', nextAttemptAt: retryAt });
    await repo.releaseLease(tx, subscriptionId, owner, retryAt);
    return false;
  }
}

const isDelivered = (code: number | null) => code !== null && code >= 200 && code < 300;

const attemptRecord =
  (at: number) =>
  ({ head, result }: AttemptOutcome): repo.AttemptRecord => ({ deliveryId: head.id, at, statusCode: result.statusCode, error: result.error, latencyMs: result.latencyMs, excerpt: result.excerpt });

/** A fan-out batch worked out before its transaction (#planFanOut). */
interface FanOutPlan {
  events: repo.FanOutEvent[];
  userIds: number[];
  subscriptions: repo.FanOutSubscription[];
  bodies: string[];
  owned: (OwnedItem | null)[];
  owners: Map<string, number>;
  groups: FanOutGroup[];
}

/** Consecutive events of a plan, marked read with their deliveries' inserts in one go. */
interface FanOutGroup {
  eventIds: number[];
  rows: Insertable<WebhookDeliveriesTable>[];
  subscriptionIds: Set<number>;
}

/** Attempts recorded together, their statements built ahead. */
interface RecordGroup {
  items: readonly AttemptOutcome[];
  attempts: CompiledQuery[];
  marks: CompiledQuery[];
  renewal: CompiledQuery<{ id: number }> | null;
}

/** The plan's events were fanned out by another node between the plan and its transaction. */
class StaleFanOut extends Error {}

const sameSubscriptions = (a: readonly repo.FanOutSubscription[], b: readonly repo.FanOutSubscription[]) =>
  a.length === b.length && a.every((s, i) => s.id === b[i]!.id && s.app_id === b[i]!.app_id && s.user_id === b[i]!.user_id && s.events === b[i]!.events && s.created_at === b[i]!.created_at);

/** One attempt's end, waiting to be recorded with the others of its flush. */
interface AttemptOutcome {
  subscriptionId: number;
  head: repo.QueueHead;
  result: SendResult;
}

/**
 * Delay before attempt `attempt + 1`: base · 2^(attempt−1), capped at an hour, with "equal jitter"
 * (half fixed, half random) so receivers coming back from an outage are not hit in lockstep.
 */
export function backoffMs(attempt: number, baseMs: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
