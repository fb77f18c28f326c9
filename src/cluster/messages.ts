import type { Publication } from '../realtime/broker.js';
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
  /** A publication on a channel this worker subscribed to. */
  | { oa: 'pub'; channel: string; pub: Publication }
  | { oa: 'revoked'; revocation: Revocation };

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
