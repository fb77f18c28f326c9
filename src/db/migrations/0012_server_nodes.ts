import type { Kysely } from 'kysely';

/**
 * server_nodes: the `openalerts serve` processes sharing this database, each refreshing its row
 * while it runs. On PostgreSQL several nodes may share one database; they must then share a broker
 * (the same REDIS_URL and REDIS_PREFIX), or events published on one node never reach the sockets of
 * another — a node that finds live peers on another broker says so loudly (log, /readyz).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('broker', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('server_nodes_seen_at').on('server_nodes').column('seen_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_nodes').execute();
}
