/**
 * Broker: carries publications between nodes and keeps per-channel history, in the spirit of
 * centrifugal/centrifuge `broker.go`. Publishing always goes broker → every subscribed node's
 * handler → hub, on one node (memory) as on many (Redis) — architecture.md convention 1.
 */

/** A channel stream position. `epoch` changes when the stream is lost (history meta expired,
 * memory broker restarted): a position from another epoch can't be recovered from. */
export interface StreamPosition {
  offset: number;
  epoch: string;
}

export interface Publication {
  /** Per-channel, strictly increasing from 1; 0 for a channel published without history. */
  offset: number;
  epoch: string;
  /** The payload, already JSON-encoded once by the publisher: brokers and the hub never re-encode it. */
  data: string;
}

export interface PublishOptions {
  /** Publications kept per channel; 0 = no history and no offset. */
  historySize: number;
  /** The stream expires this long after its last publication. */
  historyTtlMs: number;
  /** Epoch and offset expire this long after the last publication or history read (0 = never). */
  historyMetaTtlMs: number;
}

export interface HistoryOptions {
  /** Only publications with offset > since.offset (the epoch is the caller's to compare). */
  since?: { offset: number };
  /** At most this many publications, oldest first; 0 = position only; undefined = all. */
  limit?: number;
  /** Same meaning as in PublishOptions; a history read creates the epoch if there is none yet, so a
   * position handed out before the first publication stays valid after it. */
  historyMetaTtlMs?: number;
}

export interface HistoryResult {
  /** Oldest first. */
  publications: Publication[];
  /** The channel's current top: offset of its last publication and its epoch. */
  position: StreamPosition;
}

/** Node-level fan-in: called once per publication on a channel this node subscribed to. Must not throw. */
export type PublicationHandler = (channel: string, pub: Publication) => void;

export interface Broker {
  /** One handler per broker instance (one node per broker instance). */
  setHandler(handler: PublicationHandler | null): void;
  /** Resolves once publications on `channel` will reach the handler. */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /**
   * Atomically assigns the next offset, appends to history (bounded by size and TTL) and fans out.
   * With a `key` (the outbox event's identity), a channel with history publishes each key once: the
   * same key again — a relay re-publishing after a crash before it marked the event published —
   * returns the original position and delivers nothing (within the last IDEMPOTENCY_WINDOW keys of
   * the channel, while its history lives).
   */
  publish(channel: string, data: string, opts: PublishOptions, key?: string): Promise<StreamPosition>;
  history(channel: string, opts?: HistoryOptions): Promise<HistoryResult>;
  removeHistory(channel: string): Promise<void>;
  close(): Promise<void>;
  /** Whether publications can flow now (/readyz): always for memory; Redis when both connections are up. */
  connected(): boolean;
}

/** Keys remembered per channel for idempotent publishing: more than a relay batch can replay. */
export const IDEMPOTENCY_WINDOW = 1000;

/** Random epoch: 12 base-36 chars, never containing ':' (the Redis wire format relies on it). */
export function newEpoch(): string {
  let s = '';
  while (s.length < 12) s += Math.random().toString(36).slice(2);
  return s.slice(0, 12);
}
