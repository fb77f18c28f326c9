import cluster from 'node:cluster';
import type { Config } from '../config/config.js';

/**
 * `serve --workers N`: the same command runs as the primary (it forks the workers, which run this
 * command again) and as each worker.
 */
export async function runCluster(config: Readonly<Config>, workers: number): Promise<void> {
  if (cluster.isPrimary) {
    const { runPrimary } = await import('./primary.js');
    await runPrimary(config, workers);
  } else {
    const { runWorker } = await import('./worker.js');
    await runWorker(config);
  }
}
