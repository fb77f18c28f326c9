import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ServerNodeTable } from './server-nodes.table.js';

export async function upsertNode(db: Kysely<DB>, node: ServerNodeTable): Promise<void> {
  await db
    .insertInto('server_nodes')
    .values(node)
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: node.seen_at }))
    .execute();
}

export async function removeNode(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('server_nodes').where('id', '=', id).execute();
}

/** Nodes seen since `since` (ms), oldest start first. */
export async function liveNodes(db: Kysely<DB>, since: number): Promise<ServerNodeTable[]> {
  return db.selectFrom('server_nodes').selectAll().where('seen_at', '>=', since).orderBy('started_at').execute();
}

/** Forgets nodes not seen since `before` (they died without removing their row). */
export async function removeStaleNodes(db: Kysely<DB>, before: number): Promise<void> {
  await db.deleteFrom('server_nodes').where('seen_at', '<', before).execute();
}
