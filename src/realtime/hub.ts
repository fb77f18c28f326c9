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

/**
 * Channel → subscriptions of this node. A publication is encoded at most once per protocol per
 * broadcast (DESIGN.md convention 7), lazily, only if a subscriber speaks that protocol; every
 * subscriber of a protocol gets the same Buffer.
 */
export class Hub {
  private readonly channels = new Map<string, ChannelEntry>();
  private readonly ops = new Map<string, Promise<void>>();
  private count = 0;

  constructor(
    private readonly broker: Broker,
    private readonly onBrokerError: (err: unknown, channel: string) => void,
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

  /** Node-level fan-in from the broker. Synchronous: no publication interleaves with another. */
  broadcast(channel: string, pub: Publication): void {
    const entry = this.channels.get(channel);
    if (!entry) return;
    let legacyFrame: Buffer | undefined;
    let v2Frame: Buffer | undefined;
    for (const sub of entry.subs) {
      if (sub.buffer !== null) {
        sub.buffer.push(pub);
        continue;
      }
      if (!sub.advance(pub)) continue;
      const client = sub.client;
      if (client.legacy) {
        client.deliver((legacyFrame ??= Buffer.from(legacyCodec.publicationPush(channel, pub))));
      } else {
        client.deliver((v2Frame ??= Buffer.from(v2Codec.publicationPush(channel, pub))));
      }
    }
  }

  get subscriptions(): number {
    return this.count;
  }

  get channelCount(): number {
    return this.channels.size;
  }
}
