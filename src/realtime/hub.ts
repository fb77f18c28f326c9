import { performance } from 'node:perf_hooks';
import type { Broker, Publication } from './broker.js';
import { legacyCodec } from './protocol/legacy.js';
import { v2Codec } from './protocol/v2.js';

/** What the hub needs from a client. */
export interface HubClient {
  readonly legacy: boolean;
  /** Sends a frame encoded for this client's protocol. */
  deliver(frame: Buffer): void;
  /**
   * A publication of `channel` skipped this node (offsets not consecutive: the broker's pub/sub
   * connection was cut and came back, the stream's writes reached this node only in part): the
   * client must reconnect and recover rather than go on as if nothing was missed.
   */
  missed?(channel: string): void;
}

/** One client's subscription to one channel. */
export class Subscription {
  /**
   * Non-null while the subscribe command is between joining the hub and sending its reply:
   * publications arriving meanwhile wait here so none is lost or sent before the reply
   * (centrifuge `pubSubSync` buffering).
   */
  buffer: Publication[] | null = null;
  /**
   * The stream position this subscriber has been sent up to (recoverable channels; set from the
   * subscribe reply's top). Its history read and the broker's delivery of a publication race: with
   * Redis the delivery comes on the pub/sub connection, the read on another, so a publication the
   * reply already carried (recovered, or covered by its offset) can reach the hub after the reply.
   * Centrifuge keeps the same per-channel position for the same reason.
   */
  offset = 0;
  epoch = '';
  /** Left the hub (unsubscribed, closed): fan-outs still under way skip it. */
  removed = false;
  /** When it joined the hub (the hub's join counter): it gets the publications that arrived after. */
  joined = 0;

  constructor(
    readonly client: HubClient,
    readonly channel: string,
  ) {}

  /**
   * Whether `pub` is next in this subscriber's stream (then it becomes the position). Publications
   * without history (offset 0) always pass; one at or before the position is skipped. One past the
   * next, or from another epoch (the stream was lost and restarted: a Redis replaced by an empty
   * one), means this subscriber missed something: its client is told (`missed`) and gets nothing
   * more, as centrifuge's "insufficient state".
   */
  advance(pub: Publication): boolean {
    if (pub.offset === 0) return true;
    if (pub.epoch === this.epoch) {
      if (pub.offset <= this.offset) return false;
      // One or more publications of this stream never reached this node (centrifuge: "client
      // insufficient state (offset)"): sending this one would hide the gap.
      if (pub.offset > this.offset + 1 && this.client.missed) {
        this.client.missed(this.channel);
        return false;
      }
    } else if (this.epoch !== '' && this.client.missed) {
      this.client.missed(this.channel);
      return false;
    }
    this.offset = pub.offset;
    this.epoch = pub.epoch;
    return true;
  }
}

interface ChannelEntry {
  subs: Set<Subscription>;
  /** Resolves once the broker delivers this channel to the node. */
  ready: Promise<void>;
}

/** A publication that reached the node, waiting for its fan-out. */
interface Queued {
  channel: string;
  pub: Publication;
  /** The hub's join counter when it arrived: subscriptions that joined later do not get it. */
  joinedBefore: number;
  legacyFrame?: Buffer;
  v2Frame?: Buffer;
}

/**
 * Consecutive publications of one channel going out together: each subscriber gets all of them in
 * one WebSocket message, newline-separated as the JSON protocols allow (centrifuge-js splits a
 * message into lines; Centrifugo's own writer merges queued pushes the same way). One socket write
 * carries many publications when fan-out is behind, so deliveries catch up instead of piling up.
 */
interface Batch {
  channel: string;
  items: Queued[];
  subs: Subscription[];
  /** Index of the next subscriber to send to. */
  next: number;
  /** The whole batch in one message, per protocol (what almost every subscriber gets). */
  legacyAll?: Buffer;
  v2All?: Buffer;
}

/** How often (in subscribers) a slice looks at the clock. */
const CLOCK_EVERY = 32;
/** Most publications in one message. */
const MAX_BATCH = 64;
const NEWLINE = Buffer.from('\n');

/**
 * Channel → subscriptions of this node. A publication is encoded at most once per protocol
 * (architecture.md convention 3), lazily, only if a subscriber speaks that protocol; every subscriber of a
 * protocol gets the same Buffer.
 *
 * Fan-out runs in slices, one per turn of the event loop (setImmediate), so HTTP requests, database
 * replies and timers get their turn between slices however many sockets a burst of publications
 * must reach: under more deliveries than the process can make, deliveries fall behind (and batch
 * up), the rest of the server does not. Publications go out in the order they reached the node, a
 * batch to all its subscribers before the next starts, so every subscriber gets them in order.
 */
export class Hub {
  private readonly channels = new Map<string, ChannelEntry>();
  private readonly ops = new Map<string, Promise<void>>();
  private count = 0;
  private joins = 0;
  private queue: Queued[] = [];
  private head = 0;
  private batch: Batch | null = null;
  private scheduled = false;
  /** The slice queued with setImmediate, while one is. */
  private immediate: NodeJS.Immediate | null = null;
  /** True from the moment idle fan-out gets work until its first slice runs (see `flush`). */
  private firstSliceWaiting = false;
  /** When the last slice that left work behind ended, or the work was queued (performance.now()). */
  private lastSliceEnd = 0;

  constructor(
    private readonly broker: Broker,
    private readonly onBrokerError: (err: unknown, channel: string) => void,
    private readonly sliceMs = 5,
  ) {}

  /** Adds the subscription; resolves when the broker delivers the channel to this node. */
  add(sub: Subscription): Promise<void> {
    let entry = this.channels.get(sub.channel);
    if (!entry) {
      const channel = sub.channel;
      const created: ChannelEntry = { subs: new Set(), ready: this.serial(channel, () => this.broker.subscribe(channel)) };
      this.channels.set(channel, created);
      created.ready.catch((err) => {
        // A failed broker subscribe leaves the channel unusable: forget it so the next subscribe
        // retries. Its subscribers' subscribe commands fail with the same rejection.
        if (this.channels.get(channel) === created) {
          this.channels.delete(channel);
          this.count -= created.subs.size;
        }
        this.onBrokerError(err, channel);
      });
      entry = created;
    }
    if (!entry.subs.has(sub)) {
      entry.subs.add(sub);
      sub.joined = ++this.joins;
      this.count++;
    }
    return entry.ready;
  }

  remove(sub: Subscription): void {
    sub.removed = true;
    const entry = this.channels.get(sub.channel);
    if (!entry || !entry.subs.delete(sub)) return;
    this.count--;
    if (entry.subs.size === 0) {
      const channel = sub.channel;
      this.channels.delete(channel);
      this.serial(channel, () => this.broker.unsubscribe(channel)).catch((err) => this.onBrokerError(err, channel));
    }
  }

  /**
   * Broker subscribe/unsubscribe calls of one channel run in call order, each after the previous
   * settled: an unsubscribe of an emptied channel can't overtake the subscribe of its next subscriber.
   */
  private serial(channel: string, op: () => Promise<void>): Promise<void> {
    const prev = this.ops.get(channel);
    const next = prev ? prev.then(op, op) : op();
    this.ops.set(channel, next);
    const clear = (): void => {
      if (this.ops.get(channel) === next) this.ops.delete(channel);
    };
    next.then(clear, clear);
    return next;
  }

  /**
   * Node-level fan-in from the broker: queues the publication for the channel's subscriptions of
   * this moment (one joining later was positioned by its own history read, which the broker ordered
   * after this publication) and lets the slices deliver it.
   */
  broadcast(channel: string, pub: Publication): void {
    const entry = this.channels.get(channel);
    if (!entry || entry.subs.size === 0) return;
    this.queue.push({ channel, pub, joinedBefore: this.joins });
    if (!this.scheduled) {
      this.scheduled = true;
      this.firstSliceWaiting = true;
      this.lastSliceEnd = performance.now();
      this.immediate = setImmediate(this.drain);
    }
  }

  /**
   * Runs the first slice now, when fan-out was idle until this turn's publications: the outbox
   * relay calls it once a round's events are all handed over, so they reach the sockets before the
   * round's bookkeeping (its published marks) and whatever else this turn still runs — a commit's
   * events otherwise waited for the check phase behind all of it. The round's publications still
   * go out together (one message per subscriber and channel). Does nothing while fan-out is behind
   * (slices already under way keep their one-per-turn pace) or has nothing queued.
   */
  flush(): void {
    if (!this.firstSliceWaiting) return;
    if (this.immediate) clearImmediate(this.immediate);
    this.drain();
  }

  /** Publications that reached the node and are not yet sent to all their subscribers (tests, metrics). */
  get pendingPublications(): number {
    return this.queue.length - this.head + (this.batch?.items.length ?? 0);
  }

  private readonly drain = (): void => {
    // A fair share: a slice may take as long as the rest of the loop took since the last one
    // (between sliceMs and 4 × sliceMs). Blocking work elsewhere — a commit's fsync — then cannot
    // hold deliveries to a few publications a second, and a request waits at most about twice
    // what it would without fan-out, plus sliceMs.
    this.immediate = null;
    this.firstSliceWaiting = false;
    const start = performance.now();
    const deadline = start + Math.min(4 * this.sliceMs, Math.max(this.sliceMs, start - this.lastSliceEnd));
    let untilClock = CLOCK_EVERY;
    for (let b = this.batch ?? this.nextBatch(); b !== null; b = this.nextBatch()) {
      while (b.next < b.subs.length) {
        this.deliver(b, b.subs[b.next++]!);
        if (--untilClock === 0) {
          untilClock = CLOCK_EVERY;
          const t = performance.now();
          if (t >= deadline) {
            this.lastSliceEnd = t;
            this.immediate = setImmediate(this.drain);
            return;
          }
        }
      }
    }
    this.scheduled = false;
  };

  /** The next run of queued publications of one channel, with the channel's subscriptions now. */
  private nextBatch(): Batch | null {
    this.batch = null;
    while (this.head < this.queue.length) {
      const first = this.queue[this.head]!;
      let end = this.head + 1;
      while (end < this.queue.length && end - this.head < MAX_BATCH && this.queue[end]!.channel === first.channel) end++;
      const items = this.queue.slice(this.head, end);
      this.head = end;
      const entry = this.channels.get(first.channel);
      if (entry) {
        this.batch = { channel: first.channel, items, subs: [...entry.subs], next: 0 };
        break;
      }
    }
    // Drop what was sent: at once when the queue is empty, from time to time under sustained load.
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return this.batch;
  }

  private deliver(b: Batch, sub: Subscription): void {
    if (sub.removed) return;
    const items = b.items;
    if (sub.buffer !== null) {
      for (const q of items) if (sub.joined <= q.joinedBefore) sub.buffer.push(q.pub);
      return;
    }
    // Nearly always every publication of the batch is new to the subscriber; otherwise it gets those
    // that arrived after it joined and are past its position (its subscribe reply covered the rest).
    let fresh: Queued[] | null = null;
    for (let i = 0; i < items.length; i++) {
      const q = items[i]!;
      if (sub.joined <= q.joinedBefore && sub.advance(q.pub)) fresh?.push(q);
      else fresh ??= items.slice(0, i);
    }
    const client = sub.client;
    if (fresh === null) {
      client.deliver(client.legacy ? (b.legacyAll ??= this.join(b.channel, items, true)) : (b.v2All ??= this.join(b.channel, items, false)));
    } else if (fresh.length > 0) {
      client.deliver(this.join(b.channel, fresh, client.legacy));
    }
  }

  private join(channel: string, items: Queued[], legacy: boolean): Buffer {
    if (items.length === 1) return this.frame(channel, items[0]!, legacy);
    const parts: Buffer[] = [];
    for (const q of items) {
      if (parts.length > 0) parts.push(NEWLINE);
      parts.push(this.frame(channel, q, legacy));
    }
    return Buffer.concat(parts);
  }

  private frame(channel: string, q: Queued, legacy: boolean): Buffer {
    return legacy
      ? (q.legacyFrame ??= Buffer.from(legacyCodec.publicationPush(channel, q.pub)))
      : (q.v2Frame ??= Buffer.from(v2Codec.publicationPush(channel, q.pub)));
  }

  get subscriptions(): number {
    return this.count;
  }

  get channelCount(): number {
    return this.channels.size;
  }
}
