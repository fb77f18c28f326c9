/** One running `openalerts serve` process (migration 0012). */
export interface ServerNodeTable {
  /** Random per process start. */
  id: string;
  hostname: string;
  pid: number;
  /** `memory` (REDIS_URL unset) or `redis:` + a hash of REDIS_URL and REDIS_PREFIX: nodes that differ here share no events. */
  broker: string;
  started_at: number;
  /** Refreshed every heartbeat; a row not refreshed for a while belongs to a node that died. */
  seen_at: number;
}

export interface ServerNodeTables {
  server_nodes: ServerNodeTable;
}
