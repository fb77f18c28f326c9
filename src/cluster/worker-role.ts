import type { Broker } from '../realtime/broker.js';
import type { Revocations } from '../security/revocations.js';

/**
 * What makes an app a worker of `serve --workers N` (buildApp's `worker` override): the state one
 * process would keep in memory is shared through the primary (without Redis), and the background
 * duties that must run once per server — the outbox relay and the webhook dispatcher — run in the
 * primary, which each commit here wakes.
 */
export interface WorkerRole {
  /** The cluster's broker through the primary (src/realtime/broker-ipc.ts); null with Redis. */
  broker: Broker | null;
  /** The @fastify/rate-limit store counting in the primary; null with Redis. */
  rateLimitStore: (new (params: object) => object) | null;
  /** Carries this worker's revocations to the other workers and theirs here; null with Redis (its bus does). */
  shareRevocations: ((revocations: Revocations) => () => void) | null;
  /** Called after each commit of this worker: the primary's relay and dispatcher look at once. */
  committed(): void;
  /** The broker identity this worker reports to the PostgreSQL node registry. */
  brokerIdentity: string | null;
}
