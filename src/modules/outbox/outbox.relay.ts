import { CompiledQuery, sql, type Kysely } from 'kysely';
import { SQLITE_SYNCHRONOUS, type Database } from '../../db/database.js';
import { CommitWokenLoop } from '../../db/commit-woken-loop.js';
import type { DB } from '../../db/schema.js';
import { ClaimOwner } from './claim-owner.js';
import type { ChannelPosition, EventPublisher, StoredEvent } from './events.js';
import { claimOutboxRows } from './handover.js';
import * as repo from './outbox.repository.js';
import { WrittenEvent, type PendingEvent, type PublishedPositions, type StreamTop } from './outbox.repository.js';

type Logger = { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };

/**
 * Where publishing can be watched (metrics: publish latency = publishedAt − createdAt): called once
 * per event, after every channel has it. The backlog is `outboxBacklog` (outbox.repository.ts).
 */
export type PublishedListener = (event: StoredEvent, createdAt: number, publishedAt: number) => void;

export interface OutboxRelayOptions {
  /** Idle poll period: rows written by another process (the CLI, another node) go out within it. */
  pollMs?: number;
  batchSize?: number;
  /** SQLite: a claim older than this belongs to a node that died mid-publish and is taken over. */
  claimTimeoutMs?: number;
  /** Published rows are kept this long (for inspection), then deleted. */
  retentionMs?: number;
  /** Who claims rows; default: a node of its own (no earlier runs to recover claims from). */
  owner?: ClaimOwner;
  /**
   * Record the offset each channel gave each event, and each channel's epoch and last offset: the
   * in-memory broker keeps no history across restarts, so the outbox keeps it (Redis keeps its own).
   */
  recordPositions?: boolean;
  /** With recordPositions: a channel unused this long forgets its epoch and offset (default 30 days). */
  streamRetentionMs?: number;
  logger?: Logger;
}

/**
 * Publishes outbox events after commit, in id order, at least once (architecture.md convention 1 "Every change is durable
 * before we answer") through an `EventPublisher` (the real-time node, wired in the composition root).
 * Whoever wrote the row, a running server publishes it: commits in this process wake the relay at
 * once; rows from other processes are found by the idle poll. The relay's own writes never signal a
 * commit, so a commit during a round always means another round right after it.
 *
 * Exactly one node publishes a row: on PostgreSQL the drainer holds a transaction-scoped advisory
 * lock while it publishes and marks a batch, so batches never interleave across nodes and order per
 * channel is kept; on SQLite a single UPDATE … RETURNING claims rows atomically. A crash after
 * publishing but before marking publishes again; the publisher recognises the event id.
 *
 * On SQLite with an in-process publisher, a commit of this process hands over the rows its
 * transaction wrote (`enqueueEvent` → `noteOnCommit`), and they are published at once, in the
 * commit's own turn, without a read: see `#publishCommitted`. Their marks go in the next round.
 */
export class OutboxRelay {
  readonly owner: ClaimOwner;
  readonly #database: Database;
  readonly #publisher: EventPublisher;
  readonly #opts: Required<Omit<OutboxRelayOptions, 'logger' | 'owner'>> & Pick<OutboxRelayOptions, 'logger'>;
  readonly #listeners = new Set<PublishedListener>();
  readonly #loop: CommitWokenLoop;
  /** The first clean-up waits its interval like the others: the start's round only publishes (the server listens after it). */
  #lastCleanup = Date.now();
  #recovered = false;
  /** An in-process publisher: commits hand their rows over (SQLite `#publishCommitted`, PostgreSQL `#publishClaimed`). */
  readonly #takesCommits: boolean;
  #unsubscribe: (() => void) | null = null;
  /**
   * Every outbox row up to this id was read by a round of this relay or handed over by a commit —
   * published, or left as a round leaves it (not due yet, another relay's claim); null: not known.
   */
  #known: number | null = null;
  /** Published from commits and not marked yet: the next round marks them first. */
  #unmarked = new Batch();
  /** Their positions, once the publisher has given them (at once for an in-process publisher). */
  #handedOver: Promise<void> = Promise.resolve();
  /** A round must read the outbox: a commit or a kick may have left rows no commit handed over. */
  #mustRead = true;
  #lastRead = 0;
  /** PostgreSQL: rows claimed for this relay whose publication from their commit failed; the next round publishes them first. */
  #claimedLeft: WrittenEvent[] = [];

  constructor(database: Database, publisher: EventPublisher, opts: OutboxRelayOptions = {}) {
    this.#database = database;
    this.#publisher = publisher;
    const { owner, ...rest } = opts;
    this.owner = owner ?? new ClaimOwner(`relay-${Math.random().toString(36).slice(2, 10)}`);
    this.#opts = { pollMs: 100, batchSize: 200, claimTimeoutMs: 30_000, retentionMs: 3600_000, recordPositions: false, streamRetentionMs: 30 * 24 * 3600_000, ...rest };
    this.#takesCommits = publisher.inProcess === true;
    this.#loop = new CommitWokenLoop(database, {
      pollMs: this.#opts.pollMs,
      round: () => this.#round(),
      // A relay that takes its database's commits starts the rounds they need itself (#publishCommitted).
      commitNeedsRound: () => this.#unsubscribe === null,
      // Events wait in the outbox meanwhile; once the broker answers, the next round publishes them
      // in order, and those it had taken before failing carry their keys (no second publication).
      onError: (err, failures, retryMs) => this.#opts.logger?.error({ err, failures, retryMs }, 'outbox relay: publishing failed; will retry'),
      onRecovered: (failures) => this.#opts.logger?.warn({ failures }, 'outbox relay: publishing again after failed rounds'),
    });
  }

  /**
   * Starts relaying; resolves after the first round, which publishes what was pending — among it
   * what a crashed run published but never marked. The app awaits it before it listens, so no
   * subscriber recovers from a history that is about to be replayed.
   */
  async start(): Promise<void> {
    // The first round reads: what is pending goes out before the start resolves.
    this.#mustRead = true;
    // One relay per database takes its commits (two would publish each row twice).
    if (this.#takesCommits && !this.#unsubscribe && !takingCommits.has(this.#database)) {
      takingCommits.set(this.#database, this);
      const postgres = this.#database.dialect === 'postgres';
      const stop = this.#database.onCommit((notes) => (postgres ? this.#publishClaimed(notes) : this.#publishCommitted(notes)));
      // PostgreSQL: statements that can claim their rows for this relay (outbox/handover.ts) do so from now on.
      const withdraw = postgres ? claimOutboxRows(this.#database.db, { owner: this.owner.id, timeoutMs: this.#opts.claimTimeoutMs }) : () => {};
      this.#unsubscribe = () => {
        withdraw();
        stop();
        takingCommits.delete(this.#database);
      };
    }
    await this.#loop.start();
  }

  /** Drain now; a commit during a round makes one more round right after it. */
  kick(): void {
    this.#mustRead = true;
    this.#loop.kick();
  }

  /** No more rounds; what was published from commits is marked before it resolves. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.#loop.stop();
    await this.#markIfHandedOver();
    // Claimed rows left unpublished (their publisher failed): any relay's next round takes them now.
    const left = this.#claimedLeft.splice(0);
    if (left.length > 0) await repo.releaseClaims(this.#database.db, left.map((row) => row.id));
  }

  /** One full drain (all pending rows); returns how many were published. Used by tests too. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const published =
        this.#database.dialect === 'postgres'
          ? await this.#roundPostgres()
          : this.#publisher.inProcess
            ? await this.#roundSqliteInProcess()
            : await this.#roundSqlite();
      total += published;
      if (published < this.#opts.batchSize) return total;
    }
  }

  /** Watches publishing; returns the unsubscribe. */
  onPublished(listener: PublishedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Releases the claims this node's earlier, dead processes left (killed between claiming and marking
   * published), so their rows go out now rather than after the claim timeout. Claims of other nodes
   * are left alone: only the timeout says those nodes are gone. Run once by the first round.
   */
  async releaseDeadClaims(): Promise<number> {
    const claimed = await repo.claimsOfNode(this.#database.db, this.owner.node);
    const dead = claimed.filter((r) => this.owner.ownsDeadClaim(r.claimed_by));
    if (dead.length === 0) return 0;
    await repo.releaseClaims(this.#database.db, dead.map((r) => r.id));
    this.#opts.logger?.warn({ events: dead.length }, 'outbox relay: publishing the events an earlier run of this node claimed but did not finish');
    return dead.length;
  }

  async #round(): Promise<void> {
    if (!this.#recovered) {
      await this.releaseDeadClaims();
      this.#recovered = true;
    }
    // After commits that handed all their rows over, a round only marks them: the outbox is still
    // read at least once a poll period, for rows of other processes and delayed rows now due.
    if (this.#takesCommits && !this.#mustRead && Date.now() - this.#lastRead < this.#opts.pollMs) {
      await this.#markIfHandedOver();
    } else {
      await this.drain();
    }
    await this.#cleanup();
  }

  /**
   * A commit of this process, with the outbox rows its transaction wrote: published now, in the
   * commit's own turn — the commit has returned, so they are durable — when nothing older can be
   * left unpublished: the rows follow, unbroken, every row this relay already knows of (SQLite has
   * one writer at a time and ids only grow, so no other row can come between), and all are due.
   * The in-process publisher hands them to the subscribers before it returns; the next round marks
   * them, before it reads. Otherwise (rows of another process or a transaction without notes came
   * first, a delayed row, nothing known yet), a round reads them as before, at once.
   *
   * A commit published this way starts no round: what is left are the marks, and the next poll
   * (within `pollMs`) writes those of every commit since in one transaction — or a round sooner,
   * once a batch of them is waiting. Writing them after every commit cost each donation a second
   * write transaction on the event loop right after its event went out (six statements, ~0.2 ms,
   * while the subscribers' processes wanted the CPU) and doubled the WAL pages its fsync carried
   * (bench/README.md, issue 16, fourth pass). A crash before the marks publishes those events again at
   * the same offsets, as a crash between a round's publications and its marks always did.
   */
  #publishCommitted(notes: readonly object[]): void {
    const rows = notes.filter((note): note is WrittenEvent => note instanceof WrittenEvent);
    const now = Date.now();
    let next = this.#known === null ? NaN : this.#known + 1;
    if (rows.length === 0 || this.#loop.stopped || !rows.every((row) => row.id === next++ && (row.not_before === null || row.not_before <= now))) {
      this.#mustRead = true;
      this.#loop.kick();
      return;
    }
    this.#known = rows[rows.length - 1]!.id;
    const batch = this.#unmarked;
    // Chained, so commits publish in their order even if a publication waits; an in-process
    // publisher hands each to the subscribers before it returns.
    this.#handedOver = this.#handedOver.then(async () => {
      try {
        for (const row of rows) await this.#publish(row, batch);
      } catch (err) {
        // It and the rest are read and published by the next round (the publisher drops a repeat by id).
        this.#opts.logger?.error({ err }, 'outbox relay: publishing failed; will retry');
        this.#known = null;
        this.#mustRead = true;
        this.#loop.kick();
      } finally {
        this.#publisher.flush?.();
      }
      if (batch.events.length >= this.#opts.batchSize) this.#loop.kick();
    });
  }

  /**
   * PostgreSQL: a commit of this process, with the outbox rows its statement wrote. Those it
   * claimed for this relay (outbox/handover.ts: nothing older was left for a round to publish, and
   * no other relay takes claimed rows) are published now, in the commit's own turn — its COMMIT
   * has returned — without a round trip to read them back; their marks go with the next round's
   * (the next poll, within `pollMs`, or sooner once a batch of them waits). Anything else — a
   * commit without such rows, rows not claimed, delayed rows — starts a round that reads, as before.
   * A crash before the marks publishes them again once their claim is dead (at least once).
   */
  #publishClaimed(notes: readonly object[]): void {
    const rows = notes.filter((note): note is WrittenEvent => note instanceof WrittenEvent && note.claimed_by === this.owner.id);
    if (rows.length < notes.length || rows.length === 0) this.kick();
    if (rows.length === 0) return;
    this.#handedOver = this.#handedOver.then(async () => {
      let published = 0;
      try {
        // After the rows a failed publication left, never before them.
        if (this.#claimedLeft.length > 0) throw new Error('earlier claimed rows are still unpublished');
        for (const row of rows) {
          const event = storedEvent(row);
          const positions = await this.#publisher.publish(event);
          // Into the batch unmarked when the publisher answered: a round that began meanwhile has taken the one before.
          this.#unmarked.add(event, positions);
          this.#notify(event, row, Date.now());
          published++;
        }
      } catch (err) {
        // The next round publishes them first; no other relay takes them while the claim lives.
        if (this.#claimedLeft.length === 0) this.#opts.logger?.error({ err }, 'outbox relay: publishing failed; will retry');
        this.#claimedLeft.push(...rows.slice(published));
        this.kick();
      } finally {
        this.#publisher.flush?.();
      }
      if (this.#unmarked.events.length >= this.#opts.batchSize) this.#loop.kick();
    });
  }

  #notify(event: StoredEvent, row: PendingEvent, now: number): void {
    if (this.#listeners.size === 0) return;
    // A delayed event's latency counts from when it became due.
    const due = Math.max(Number(row.created_at), Number(row.not_before ?? 0));
    for (const listener of this.#listeners) listener(event, due, now);
  }

  async #publish(row: PendingEvent, batch: Batch): Promise<void> {
    const event = storedEvent(row);
    batch.add(event, await this.#publisher.publish(event));
    this.#notify(event, row, Date.now());
  }

  async #roundSqlite(): Promise<number> {
    const now = Date.now();
    const rows = await this.#bookkeeping((db) => repo.claimPending(db, this.owner.id, now, now - this.#opts.claimTimeoutMs, this.#opts.batchSize));
    if (rows.length === 0) return 0;
    const batch = new Batch();
    try {
      for (const row of rows) await this.#publish(row, batch);
    } finally {
      this.#publisher.flush?.();
      const unpublished = rows.slice(batch.events.length).map((r) => r.id);
      await this.#bookkeeping(async (db) => {
        // One transaction (plain statements: no commit signal) for the marks of the whole batch.
        await sql`begin`.execute(db);
        try {
          await this.#markPublished(db, batch);
          await repo.releaseClaims(db, unpublished);
          await sql`commit`.execute(db);
        } catch (err) {
          await sql`rollback`.execute(db).catch(() => {});
          throw err;
        }
      });
    }
    return batch.events.length;
  }

  /**
   * SQLite with an in-process publisher (the memory broker): one transaction per round on the held
   * connection — read the due rows, publish them, mark them — instead of a claim written before
   * publishing and the marks after it: one write and one WAL commit per round, and the claim's
   * write is no longer on every event's way to its subscribers. BEGIN IMMEDIATE holds the write
   * lock throughout, so another relay (another process) waits and then finds the rows marked;
   * rows another relay claimed the old way are skipped until their claim times out. A crash before
   * the COMMIT leaves the rows unmarked, and they are published again (at least once, as when a
   * crash falls between publishing and marking).
   */
  async #roundSqliteInProcess(): Promise<number> {
    return this.#bookkeeping(async (db) => {
      // Another relay of this process that takes the commits may have published rows it has not
      // marked yet (they wait for its poll): marked first, so this read never publishes them again.
      const taker = takingCommits.get(this.#database);
      if (taker && taker !== this) await taker.#markHandedOver(db);
      await this.#markHandedOver(db);
      return this.#readAndPublish(db);
    });
  }

  /** The marks of what commits handed over, when there is any (once their publications are done). */
  async #markIfHandedOver(): Promise<void> {
    await this.#handedOver;
    if (this.#unmarked.events.length === 0) return;
    if (this.#database.dialect === 'sqlite') {
      await this.#bookkeeping((db) => this.#markHandedOver(db));
      return;
    }
    const batch = this.#unmarked;
    this.#unmarked = new Batch();
    try {
      await this.#database.db.connection().execute((db) => repo.markHandedOver(db, batch.events, this.#opts.recordPositions ? [...batch.tops.values()] : null, Date.now()));
    } catch (err) {
      this.#unmarked = batch.followedBy(this.#unmarked);
      throw err;
    }
  }

  /**
   * Marks what commits handed over and was published since the last round, in a transaction of
   * its own: committed before the round publishes anything else, so a crash can never take back
   * the marks of events that went out before events the round publishes (a delayed alert now due
   * passes later rows: published again in id order, they would swap offsets).
   */
  async #markHandedOver(db: Kysely<DB>): Promise<void> {
    // No commit comes between here and the end of the round: the connection is held.
    await this.#handedOver;
    const handedOver = this.#unmarked;
    if (handedOver.events.length === 0) return;
    await this.#writeTransaction(db, () => this.#markPublished(db, handedOver));
    this.#unmarked = new Batch();
  }

  /** `work` in one write transaction of the relay's connection; if it fails, the next round reads the outbox again. */
  async #writeTransaction<T>(db: Kysely<DB>, work: () => Promise<T>): Promise<T> {
    await db.executeQuery(BEGIN_IMMEDIATE);
    try {
      const result = await work();
      await db.executeQuery(COMMIT);
      return result;
    } catch (err) {
      await db.executeQuery(ROLLBACK).catch(() => {});
      this.#known = null;
      this.#mustRead = true;
      throw err;
    }
  }

  /**
   * One transaction: the due rows read, published and marked. When it finds fewer rows than a
   * batch, every row up to the outbox's last id is accounted for (`#known`).
   */
  async #readAndPublish(db: Kysely<DB>): Promise<number> {
    const batch = new Batch();
    const failure = await this.#writeTransaction(db, async () => {
      let failure: { error: unknown } | null = null;
      this.#mustRead = false;
      const now = Date.now();
      this.#lastRead = now;
      const rows = await repo.duePending(db, now, now - this.#opts.claimTimeoutMs, this.#opts.batchSize);
      if (rows.length < this.#opts.batchSize) this.#known = (await db.executeQuery<{ top: number | null }>(LAST_ID)).rows[0]?.top ?? 0;
      try {
        for (const row of rows) await this.#publish(row, batch);
      } catch (error) {
        // The events published before it are marked; it and the rest stay for the next round.
        failure = { error };
        this.#known = null;
      }
      this.#publisher.flush?.();
      await this.#markPublished(db, batch);
      return failure;
    });
    if (failure) throw failure.error;
    return batch.events.length;
  }

  /**
   * SQLite: the relay's own writes (claims, published marks) skip the fsync. Losing one to a power
   * cut only re-publishes a row (at least once, as designed), and the next durable commit syncs
   * the WAL anyway; it keeps a donation's path to subscribers at one fsync instead of three. The
   * connection is held throughout, so no request's commit can run under the relaxed setting. The
   * statements run outside any transaction, so they never signal a commit back to the relay.
   */
  async #bookkeeping<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    return this.#database.db.connection().execute(async (db) => {
      await db.executeQuery(SYNCHRONOUS_NORMAL);
      try {
        return await fn(db);
      } finally {
        await db.executeQuery(SYNCHRONOUS_DEFAULT);
      }
    });
  }

  /**
   * PostgreSQL: one transaction per batch, begun and committed as plain statements on one pooled
   * connection so that our own commit does not wake the relay again (only transactions run through
   * Kysely signal commits). Two round trips: BEGIN, the lock and the read after it in one message
   * (`beginDrainRound`), then the marks and COMMIT in another (`endDrainRound`) — a COMMIT that
   * does not wait for its WAL flush (the marks may be lost in a crash, and then the rows are
   * published again, as at-least-once allows).
   */
  async #roundPostgres(): Promise<number> {
    // What commits handed over and was published since the last round: marked with this round's rows.
    await this.#handedOver;
    const batch = this.#unmarked;
    this.#unmarked = new Batch();
    return this.#database.db.connection().execute(async (db) => {
      let claimed = batch;
      try {
        // Rows claimed for this relay whose publication from their commit failed: no read finds
        // them while the claim lives, so they go first.
        // Taken out while they are published: a concurrent round (`drain`) must not publish them too.
        const left = this.#claimedLeft.splice(0);
        let done = 0;
        try {
          for (; done < left.length; done++) await this.#publish(left[done]!, batch);
        } finally {
          this.#claimedLeft.unshift(...left.slice(done));
          claimed = new Batch(batch);
        }
        const now = Date.now();
        // Nothing when another node is draining (it takes these rows) or nothing is due.
        const rows = await repo.beginDrainRound(db, this.#opts.batchSize, now, now - this.#opts.claimTimeoutMs);
        try {
          for (const row of rows) await this.#publish(row, batch);
        } finally {
          this.#publisher.flush?.();
        }
        await repo.endDrainRound(db, batch.events, this.#opts.recordPositions ? [...batch.tops.values()] : null, Date.now());
        return rows.length;
      } catch (err) {
        await db.executeQuery(ROLLBACK).catch(() => {});
        // Claimed rows stay published and unmarked (no other relay takes them while the claim
        // lives): marked by a later round. The rows this round read are read again.
        this.#unmarked = claimed.followedBy(this.#unmarked);
        throw err;
      }
    });
  }

  async #markPublished(db: Kysely<DB>, batch: Batch): Promise<void> {
    if (batch.events.length === 0) return;
    const now = Date.now();
    if (this.#opts.recordPositions) {
      await repo.recordPublished(db, batch.events, [...batch.tops.values()], now);
    } else {
      await repo.markPublished(db, batch.events.map((e) => e.id), now);
    }
  }

  async #cleanup(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastCleanup < 60_000) return;
    this.#lastCleanup = now;
    await repo.deletePublishedBefore(this.#database.db, now - this.#opts.retentionMs);
    if (this.#opts.recordPositions) await repo.deleteStaleStreams(this.#database.db, now - this.#opts.streamRetentionMs);
  }
}

/** Databases whose commits a started relay of this process publishes from (`#publishCommitted`), and that relay. */
const takingCommits = new WeakMap<Database, OutboxRelay>();

// Compiled once: a relay round runs them for every event's commit.
const SYNCHRONOUS_NORMAL = CompiledQuery.raw('pragma synchronous = NORMAL');
const SYNCHRONOUS_DEFAULT = CompiledQuery.raw(`pragma synchronous = ${SQLITE_SYNCHRONOUS}`);
const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
const LAST_ID = CompiledQuery.raw('select max(id) as top from outbox');

function storedEvent(row: PendingEvent): StoredEvent {
  return { id: row.id, type: row.type, channels: JSON.parse(row.channels), payload: row.payload, createdAt: Number(row.created_at) };
}

/** What one round published: each event's offsets, and each channel's latest position. */
class Batch {
  readonly events: PublishedPositions[];
  readonly tops: Map<string, StreamTop>;

  /** Empty, or a copy of `from`. */
  constructor(from?: Batch) {
    this.events = from ? [...from.events] : [];
    this.tops = new Map(from?.tops);
  }

  /** This batch, then `later`'s events, as one. */
  followedBy(later: Batch): Batch {
    const both = new Batch(this);
    both.events.push(...later.events);
    for (const top of later.tops.values()) both.#raise(top);
    return both;
  }

  #raise(p: StreamTop): void {
    const top = this.tops.get(p.channel);
    // A re-published event (after a crash) reports its original offset: never move a top back.
    if (p.offset > 0 && !(top && top.epoch === p.epoch && top.offset > p.offset)) this.tops.set(p.channel, p);
  }

  add(event: StoredEvent, positions: ChannelPosition[]): void {
    this.events.push({ id: event.id, offsets: positions.map((p) => p.offset) });
    event.channels.forEach((channel, i) => {
      const p = positions[i];
      if (p) this.#raise({ channel, epoch: p.epoch, offset: p.offset });
    });
  }
}
