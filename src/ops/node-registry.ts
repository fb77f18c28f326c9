import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { DB } from '../db/schema.js';
import { sha256Hex } from '../security/crypto.js';
import { liveNodes, removeNode, removeStaleNodes, upsertNode } from './server-nodes.repository.js';

type Logger = { error(obj: object, msg: string): void; info(obj: object, msg: string): void };

export interface NodeRegistryOptions {
  heartbeatMs?: number;
  /** A node not seen for this long is gone (it died without saying so). */
  staleAfterMs?: number;
  /** Instead of brokerIdentity(config): the workers of one `serve --workers N` share their primary's broker. */
  brokerIdentity?: string;
}

/** What the broker of a node is, in a form nodes can compare without revealing the Redis URL. */
export function brokerIdentity(config: Pick<Config, 'redisUrl' | 'redisPrefix'>): string {
  return config.redisUrl ? `redis:${sha256Hex(`${config.redisUrl}\n${config.redisPrefix}`).slice(0, 16)}` : 'memory';
}

/**
 * The `serve` processes sharing one PostgreSQL database, through heartbeats in `server_nodes`.
 * Several nodes are only safe on one shared broker: with REDIS_URL unset (or different), each node
 * publishes outbox events to its own sockets only, keeps its own rate-limit counters and does not
 * hear the others' token revocations. That is not refused (a rolling restart briefly runs two
 * nodes), but logged at error level whenever it starts and reported by /readyz while it lasts.
 */
export class NodeRegistry {
  readonly id = randomUUID();
  readonly #db: Kysely<DB>;
  readonly #broker: string;
  readonly #logger: Logger;
  readonly #heartbeatMs: number;
  readonly #staleAfterMs: number;
  readonly #startedAt = Date.now();
  #timer: NodeJS.Timeout | null = null;
  #warning: string | null = null;
  #nodes = 1;

  constructor(db: Kysely<DB>, config: Pick<Config, 'redisUrl' | 'redisPrefix'>, logger: Logger, opts: NodeRegistryOptions = {}) {
    this.#db = db;
    this.#broker = opts.brokerIdentity ?? brokerIdentity(config);
    this.#logger = logger;
    this.#heartbeatMs = opts.heartbeatMs ?? 10_000;
    this.#staleAfterMs = opts.staleAfterMs ?? 35_000;
  }

  async start(): Promise<void> {
    await this.check();
    this.#timer = setInterval(() => {
      this.check().catch((err) => this.#logger.error({ err }, 'node registry: heartbeat failed; will retry'));
    }, this.#heartbeatMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    // A node that cannot say goodbye (database already gone) simply stops being seen: its row
    // goes stale and others stop counting it. Shutting down must not fail for that.
    await removeNode(this.#db, this.id).catch((err) => this.#logger.error({ err }, 'node registry: could not remove this node; it will expire'));
  }

  /** Refreshes this node's row, reads its live peers and updates (and on a change logs) the warning. */
  async check(): Promise<{ nodes: number; warning: string | null }> {
    const now = Date.now();
    await upsertNode(this.#db, { id: this.id, hostname: os.hostname(), pid: process.pid, broker: this.#broker, started_at: this.#startedAt, seen_at: now });
    await removeStaleNodes(this.#db, now - 10 * this.#staleAfterMs);
    const live = await liveNodes(this.#db, now - this.#staleAfterMs);
    // An in-memory broker is never shared: any two nodes where one has it miss each other's events.
    const others = live.filter((n) => n.id !== this.id && (n.broker === 'memory' || n.broker !== this.#broker));
    const warning =
      others.length === 0
        ? null
        : this.#broker === 'memory'
          ? `${live.length} OpenAlerts nodes share this database but REDIS_URL is not set on this one: events, rate limits and token revocations stay on the node that made them, so real-time clients on other nodes miss events. Give every node the same REDIS_URL (and REDIS_PREFIX).`
          : `${live.length} OpenAlerts nodes share this database but not all publish through this node's Redis (no REDIS_URL, or another REDIS_URL or REDIS_PREFIX): real-time clients on one miss the others' events. Give every node the same REDIS_URL and REDIS_PREFIX.`;
    if (warning !== this.#warning) {
      if (warning) this.#logger.error({ nodes: live.map((n) => ({ host: n.hostname, pid: n.pid, broker: n.broker })) }, `EVENTS ARE BEING LOST: ${warning}`);
      else if (this.#warning) this.#logger.info({ nodes: live.length }, 'node registry: every live node now shares this broker');
      this.#warning = warning;
    }
    this.#nodes = live.length;
    return { nodes: live.length, warning };
  }

  /** As of the last heartbeat (/readyz reads this instead of writing on every probe). */
  get status(): { nodes: number; warning: string | null } {
    return { nodes: this.#nodes, warning: this.#warning };
  }
}
