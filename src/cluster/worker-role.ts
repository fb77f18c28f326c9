import crypto from 'node:crypto';
import os from 'node:os';
import type { Broker } from '../realtime/broker.js';
import { IpcBroker } from '../realtime/broker-ipc.js';
import { isRevocation, type Revocations } from '../security/revocations.js';
import type { PrimaryLink } from './primary-link.js';
import { ipcRateLimitStore } from './rate-limit-store.js';

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

/**
 * The role of a worker talking to its primary over `link`. Without Redis (`viaPrimary`), its
 * broker, rate-limit counters and revocations go through the primary; with Redis, they use Redis
 * as a single server does. Either way the primary hears each commit.
 */
export function workerRole(link: PrimaryLink, viaPrimary: boolean): WorkerRole {
  return {
    broker: viaPrimary ? new IpcBroker(link) : null,
    rateLimitStore: viaPrimary ? ipcRateLimitStore(link) : null,
    shareRevocations: viaPrimary
      ? (revocations) => {
          const stopSending = revocations.onAnnounce((revocation) => link.send({ oa: 'revoked', revocation }));
          const stopHearing = link.on('revoked', (m) => {
            if (isRevocation(m.revocation)) revocations.receive(m.revocation);
          });
          return () => {
            stopSending();
            stopHearing();
          };
        }
      : null,
    committed: () => link.send({ oa: 'commit' }),
    // The workers of one primary share its broker; another server on the same database does not.
    brokerIdentity: viaPrimary ? `cluster:${crypto.createHash('sha256').update(`${os.hostname()}/${process.ppid}`).digest('hex').slice(0, 16)}` : null,
  };
}
