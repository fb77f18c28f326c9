import type { Broker, HistoryOptions, HistoryResult, Publication, PublicationHandler, PublishOptions, StreamPosition } from './broker.js';
import { IDEMPOTENCY_WINDOW, newEpoch } from './broker.js';

interface ChannelStream {
  epoch: string;
  offset: number;
  pubs: Publication[];
  /** Idempotency keys of recent publications → their offsets, oldest first (Map order). */
  keys: Map<string, number>;
  /** History is dropped after this time (ms); meta after metaExpireAt (0 = never). */
  expireAt: number;
  metaExpireAt: number;
}

/** A channel's stream as kept elsewhere (the outbox): where a restarted broker continues from. */
export interface SavedStream {
  channel: string;
  epoch: string;
  offset: number;
  /** When the channel last published. */
  updatedAt: number;
  /** Oldest first. */
  publications: { offset: number; data: string; publishedAt: number }[];
}

/**
 * Single-node broker (centrifuge `broker_memory.go`). Offsets, epochs and history live in this
 * process; `restore` continues the streams a previous run left (the app keeps them in the outbox),
 * so a restart keeps epochs and subscribers recover what they missed. Publications reach the
 * handler synchronously, before `publish` resolves.
 */
export class MemoryBroker implements Broker {
  private handler: PublicationHandler | null = null;
  private readonly streams = new Map<string, ChannelStream>();
  private readonly subscribed = new Set<string>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: { sweepIntervalMs?: number } = {}) {
    this.sweeper = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  setHandler(handler: PublicationHandler | null): void {
    this.handler = handler;
  }

  async subscribe(channel: string): Promise<void> {
    this.subscribed.add(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.subscribed.delete(channel);
  }

  async publish(channel: string, data: string, opts: PublishOptions, key?: string): Promise<StreamPosition> {
    if (opts.historySize <= 0) {
      if (this.subscribed.has(channel)) this.handler?.(channel, { offset: 0, epoch: '', data });
      return { offset: 0, epoch: '' };
    }
    const now = Date.now();
    const s = this.stream(channel, now, opts.historyMetaTtlMs);
    if (now >= s.expireAt) {
      s.pubs.length = 0;
      s.keys.clear();
    }
    if (key !== undefined) {
      const published = s.keys.get(key);
      if (published !== undefined) return { offset: published, epoch: s.epoch };
    }
    const pub: Publication = { offset: ++s.offset, epoch: s.epoch, data };
    if (key !== undefined) {
      s.keys.set(key, pub.offset);
      if (s.keys.size > IDEMPOTENCY_WINDOW) s.keys.delete(s.keys.keys().next().value!);
    }
    s.pubs.push(pub);
    if (s.pubs.length > opts.historySize) s.pubs.splice(0, s.pubs.length - opts.historySize);
    s.expireAt = now + opts.historyTtlMs;
    if (this.subscribed.has(channel)) this.handler?.(channel, pub);
    return { offset: pub.offset, epoch: pub.epoch };
  }

  async history(channel: string, opts: HistoryOptions = {}): Promise<HistoryResult> {
    const now = Date.now();
    const s = this.stream(channel, now, opts.historyMetaTtlMs ?? 0);
    const position = { offset: s.offset, epoch: s.epoch };
    if (opts.limit === 0 || now >= s.expireAt) return { publications: [], position };
    const after = opts.since?.offset ?? 0;
    let pubs = s.pubs;
    let i = 0;
    while (i < pubs.length && pubs[i].offset <= after) i++;
    pubs = pubs.slice(i, opts.limit !== undefined ? i + opts.limit : undefined);
    return { publications: pubs, position };
  }

  /** Continues saved streams (before any publish): same epoch, next offset, history still in its window. */
  restore(streams: SavedStream[], opts: PublishOptions): void {
    const now = Date.now();
    for (const saved of streams) {
      const metaExpireAt = opts.historyMetaTtlMs > 0 ? saved.updatedAt + opts.historyMetaTtlMs : 0;
      if (metaExpireAt !== 0 && now >= metaExpireAt) continue;
      const pubs = saved.publications.filter((p) => p.offset <= saved.offset).slice(-Math.max(opts.historySize, 0));
      const lastAt = saved.publications.at(-1)?.publishedAt ?? 0;
      this.streams.set(saved.channel, {
        epoch: saved.epoch,
        offset: saved.offset,
        pubs: pubs.map((p) => ({ offset: p.offset, epoch: saved.epoch, data: p.data })),
        keys: new Map(),
        expireAt: lastAt + opts.historyTtlMs,
        metaExpireAt,
      });
    }
  }

  async removeHistory(channel: string): Promise<void> {
    const s = this.streams.get(channel);
    if (s) {
      s.pubs.length = 0;
      s.keys.clear();
    }
  }

  connected(): boolean {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.handler = null;
  }

  /** Gets or creates the channel's stream; refreshes its meta TTL (as a Redis history read does). */
  private stream(channel: string, now: number, metaTtlMs: number): ChannelStream {
    let s = this.streams.get(channel);
    if (s && s.metaExpireAt !== 0 && now >= s.metaExpireAt) {
      this.streams.delete(channel);
      s = undefined;
    }
    if (!s) {
      s = { epoch: newEpoch(), offset: 0, pubs: [], keys: new Map(), expireAt: 0, metaExpireAt: 0 };
      this.streams.set(channel, s);
    }
    if (metaTtlMs > 0) s.metaExpireAt = now + metaTtlMs;
    return s;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [channel, s] of this.streams) {
      if (now >= s.expireAt) {
        s.pubs.length = 0;
        s.keys.clear();
      }
      if (s.metaExpireAt !== 0 && now >= s.metaExpireAt) this.streams.delete(channel);
    }
  }
}
