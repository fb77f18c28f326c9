import crypto from 'node:crypto';
import os from 'node:os';
import type { Config } from '../config/config.js';
import { IpcBroker } from '../realtime/broker-ipc.js';
import { isRevocation } from '../security/revocations.js';
import { startServer } from '../server.js';
import { PrimaryLink } from './primary-link.js';
import { ipcRateLimitStore } from './rate-limit-store.js';
import type { WorkerRole } from './worker-role.js';

/**
 * One worker of `serve --workers N`: the whole app on the shared port (node:cluster hands it
 * connections). Without Redis, its broker, rate-limit counters and revocations go through the
 * primary; with Redis, they use Redis as a single server does. Either way the primary runs the
 * outbox relay and webhook dispatcher, and hears each commit. A worker whose primary is gone stops.
 */
export async function runWorker(config: Readonly<Config>): Promise<void> {
  const link = new PrimaryLink();
  const shared = !config.redisUrl;
  const role: WorkerRole = {
    broker: shared ? new IpcBroker(link) : null,
    rateLimitStore: shared ? ipcRateLimitStore(link) : null,
    shareRevocations: shared
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
    brokerIdentity: shared ? `cluster:${crypto.createHash('sha256').update(`${os.hostname()}/${process.ppid}`).digest('hex').slice(0, 16)}` : null,
  };
  // The primary died (or stopped without telling us): stop as on SIGTERM.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  await startServer(config, role);
}
