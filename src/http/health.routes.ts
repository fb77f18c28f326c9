import type { FastifyInstance } from 'fastify';
import { migrationStatus, type MigrationStatus } from '../db/migrate.js';

/**
 * `/healthz`: the process answers (liveness). `/readyz`: this node can serve (readiness) — the
 * database answers, its schema is this version's, and the broker is connected; 503 otherwise.
 * Warnings do not make a node unready, because the load balancer would then take every node out:
 * several nodes without a shared broker (a rolling restart runs two for a moment; the log says it
 * loudly while it lasts), or a database already migrated by a newer version (during an upgrade).
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    const { database, realtime, nodes } = app.ctx;
    const databaseUp = await database.ping();
    let migrations: MigrationStatus | null = null;
    if (databaseUp) {
      migrations = await migrationStatus(database.db).catch((err) => {
        request.log.warn({ err }, 'readyz: reading the migration status failed');
        return null;
      });
    }
    const broker = realtime.broker.connected();
    const warnings: string[] = [];
    if (migrations?.unknown.length) {
      warnings.push(`The database has migrations this version does not know (${migrations.unknown.join(', ')}): a newer version migrated it; upgrade this node.`);
    }
    const cluster = nodes?.status;
    if (cluster?.warning) warnings.push(cluster.warning);
    const ready = databaseUp && migrations !== null && migrations.pending.length === 0 && broker;
    return reply.status(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      database: databaseUp,
      migrations: migrations === null ? 'unknown' : migrations.pending.length ? 'pending' : 'current',
      broker: broker ? 'connected' : 'disconnected',
      ...(cluster ? { nodes: cluster.nodes } : {}),
      warnings,
    });
  });
}
