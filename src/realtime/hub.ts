import { performance } from 'node:perf_hooks';
import type { Broker, Publication } from './broker.js';
import { legacyCodec } from './protocol/legacy.js';
import { v2Codec } from './protocol/v2.js';

/** What the hub needs from a client. */
export interface HubClient {
  readonly legacy: boolean;
  /** Sends a frame encoded for this client's protocol. */
  deliver(frame: Buffer): void;
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

  constructor(
    readonly client: HubClient,
    readonly channel: string,
  ) {}

  /**
   * Whether `pub` is past this subscriber's position (then it becomes the position). Publications
   * without history (offset 0) always pass; one from another epoch too (the stream was lost and
   * restarted, offsets begin again).
   */
  advance(pub: Publication): boolean {
    if (pub.offset === 0) return true;
    if (pub.epoch === this.epoch && pub.offset <= this.offset) return false;
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

/** One publication on its way to the subscribers the channel had when it reached the node. */
interface Fanout {
  channel: string;
  pub: Publication;
  subs: Subscription[];
  /** Index of the next subscriber to send to. */
  next: number;
  legacyFrame?: Buffer;
  v2Frame?: Buffer;
}

/** How often (in deliveries) a slice looks at the clock. */
const CLOCK_EVERY = 32;

/**
 * Channel → subscriptions of this node. A publication is encoded at most once per protocol per
 * broadcast (DESIGN.md convention 7), lazily, only if a subscriber speaks that protocol; every
 * subscriber of a protocol gets the same Buffer.
 *
 * Fan-out runs in slices of at most `sliceMs`, one per turn of the event loop (setImmediate), so
 * HTTP requests, database replies and timers get their turn between slices however many sockets a
 * burst of publications must reach: under more deliveries than the process can make, deliveries
 * fall behind, the rest of the server does not. Publications go out in the order they reached the
 * node, each to all its subscribers before the next starts, so every subscriber gets them in order.
 */
export class Hub {
  private readonly channels = new Map<string, ChannelEntry>();
  private readonly ops = new Map<string, Promise<void>>();
  private count = 0;
  private queue: Fanout[] = [];
  private head = 0;
  private scheduled = false;
  private backlog = 0;
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
   * Node-level fan-in from the broker: queues the publication for the channel's current subscribers
   * (a subscriber joining later was positioned by its own history read, which the broker ordered
   * after this publication) and lets the slices deliver it.
   */
  broadcast(channel: string, pub: Publication): void {
    const entry = this.channels.get(channel);
    if (!entry || entry.subs.size === 0) return;
    this.queue.push({ channel, pub, subs: [...entry.subs], next: 0 });
    this.backlog += entry.subs.size;
    if (!this.scheduled) {
      this.scheduled = true;
      this.lastSliceEnd = performance.now();
      setImmediate(this.drain);
    }
  }

  /** Deliveries queued and not yet made (metrics, tests). */
  get pendingDeliveries(): number {
    return this.backlog;
  }

  private readonly drain = (): void => {
    // A fair share: a slice may take as long as the rest of the loop took since the last one
    // (between sliceMs and 4 × sliceMs). Blocking work elsewhere — a commit's fsync — then cannot
    // hold deliveries to a few publications a second, and a request waits at most about twice
    // what it would without fan-out, plus sliceMs.
    const start = performance.now();
    const deadline = start + Math.min(4 * this.sliceMs, Math.max(this.sliceMs, start - this.lastSliceEnd));
    let untilClock = CLOCK_EVERY;
    while (this.head < this.queue.length) {
      const f = this.queue[this.head]!;
      while (f.next < f.subs.length) {
        this.deliver(f, f.subs[f.next++]!);
        this.backlog--;
        if (--untilClock === 0) {
          untilClock = CLOCK_EVERY;
          const t = performance.now();
          if (t >= deadline) {
            this.lastSliceEnd = t;
            setImmediate(this.drain);
            return;
          }
        }
      }
      this.head++;
      // Under sustained overload the queue never empties: drop what was sent from time to time.
      if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
    }
    this.queue = [];
    this.head = 0;
    this.scheduled = false;
  };

  private deliver(f: Fanout, sub: Subscription): void {
    if (sub.removed) return;
    if (sub.buffer !== null) {
      sub.buffer.push(f.pub);
      return;
    }
    if (!sub.advance(f.pub)) return;
    const client = sub.client;
    if (client.legacy) client.deliver((f.legacyFrame ??= Buffer.from(legacyCodec.publicationPush(f.channel, f.pub))));
    else client.deliver((f.v2Frame ??= Buffer.from(v2Codec.publicationPush(f.channel, f.pub))));
  }

  get subscriptions(): number {
    return this.count;
  }

  get channelCount(): number {
    return this.channels.size;
  }
}
