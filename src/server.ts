import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { WorkerRole } from './cluster/worker-role.js';
import type { Config } from './config/config.js';
import { secretsFileExisted } from './config/secrets.js';
import { acquireServerLock } from './ops/server-lock.js';

/**
 * Listens and shuts down gracefully: on SIGTERM/SIGINT stop accepting, let in-flight requests
 * finish, run every onClose hook (real-time clients get 3001, the database closes).
 */
export async function startServer(config: Readonly<Config>, worker?: WorkerRole): Promise<FastifyInstance> {
  const firstStart = config.secretKey === null && !secretsFileExisted(config.dataDir);
  // SQLite: one server per file, refused before anything is opened (src/ops/server-lock.ts). A
  // worker of `serve --workers N` runs under its primary, which holds the lock.
  const lock = config.database.dialect === 'sqlite' && !worker ? acquireServerLock(config.database.file, 'an OpenAlerts server') : null;
  let app: FastifyInstance;
  try {
    app = await buildApp(config, worker ? { worker } : {});
    app.addHook('onClose', async () => lock?.release());
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    lock?.release();
    throw err;
  }

  if (!worker) printBanner(config, firstStart, null, app.ctx.nodes?.status.warning ?? null);
  handleSignals(app);
  return app;
}

/** What an operator sees once the server listens (`processes`: how `--workers` runs it, if it does). */
export function printBanner(config: Readonly<Config>, firstStart: boolean, processes: string | null, clusterWarning: string | null): void {
  const where = config.database.dialect === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL';
  process.stderr.write(
    `\nOpenAlerts is running: open ${config.publicUrl}/ to sign up (the first account is the administrator).\n` +
      `  API ${config.publicUrl}/api/v1 · OAuth ${config.publicUrl}/oauth/authorize · real-time ${config.publicUrl.replace(/^http/, 'ws')}/connection/websocket\n` +
      `  storage: ${where}${processes ? ` · ${processes}` : ''}${firstStart ? ` · new secret key written to ${config.dataDir}/secret.key (back it up)` : ''}\n\n`,
  );
  if (clusterWarning) process.stderr.write(`!!! WARNING — EVENTS WILL BE LOST: ${clusterWarning}\n\n`);
}

function handleSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
