import type { Revocation } from '../security/revocations.js';

/**
 * What the primary and its workers say to each other over the cluster's IPC channel. Every message
 * carries `oa` (its kind), so anything else on the channel (node:cluster's own messages) is ignored.
 */
export type ToPrimary =
  /** A request the primary answers with a `res` of the same id. */
  | { oa: 'req'; id: number; op: Operation; args: unknown[] }
  /** The worker committed a transaction: the outbox relay and the webhook dispatcher (in the primary) look now. */
  | { oa: 'commit' }
  /** Revoked on this worker: the others' caches and sockets must forget it. */
  | { oa: 'revoked'; revocation: Revocation };

export type ToWorker =
  | { oa: 'res'; id: number; ok: true; value: unknown }
  | { oa: 'res'; id: number; ok: false; error: string }
  /** Publications on channels this worker subscribed to, in the order the broker assigned them. */
  | { oa: 'pubs'; pubs: PublicationTuple[] }
  | { oa: 'revoked'; revocation: Revocation };

/** A publication on the wire: channel, offset, epoch, data (an array: no key names to write and parse per publication). */
export type PublicationTuple = [channel: string, offset: number, epoch: string, data: string];

export type Operation =
  | 'broker.subscribe'
  | 'broker.unsubscribe'
  | 'broker.publish'
  | 'broker.history'
  | 'broker.removeHistory'
  | 'counter.incr'
  | 'counter.read';

export function isMessage<T extends { oa: string }>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && typeof (value as { oa?: unknown }).oa === 'string';
}
