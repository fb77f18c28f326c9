import type { Config } from '../config/config.js';
import { startServer } from '../server.js';
import { PrimaryLink } from './primary-link.js';
import { workerRole } from './worker-role.js';

/**
 * One worker of `serve --workers N`: the whole app on the shared port (node:cluster hands it
 * connections), in the role worker-role.ts describes. A worker whose primary is gone stops.
 */
export async function runWorker(config: Readonly<Config>): Promise<void> {
  const role = workerRole(new PrimaryLink(), !config.redisUrl);
  // The primary died (or stopped without telling us): stop as on SIGTERM.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  await startServer(config, role);
}
