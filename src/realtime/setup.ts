import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Metrics } from '../metrics/metrics.js';
import { observedBroker } from '../metrics/observed-broker.js';
import type { EventPublisher } from '../modules/outbox/events.js';
import { loadChannelHistories } from '../modules/outbox/outbox.repository.js';
import type { RealtimeTokens } from '../modules/realtime-tokens/realtime-tokens.service.js';
import type { Broker, PublishOptions } from './broker.js';
import { MemoryBroker } from './broker-memory.js';
import { RealtimeNode } from './node.js';

export const REALTIME_VERSION = 'openalerts 0.1';

export interface Realtime {
  node: RealtimeNode;
  broker: Broker;
  /** What the outbox relay publishes stored events through (wired in app.ts). */
  publisher: EventPublisher;
  /** The in-memory broker's history is kept in the outbox (the relay records offsets): no Redis. */
  historyInDatabase: boolean;
}

/**
 * Wires the real-time node into the app: one broker (memory, or Redis when REDIS_URL is set), the
 * WebSocket endpoint on the app's own HTTP server (tokens checked by the realtime-tokens service,
 * which also has the node close the sockets whose tokens get revoked), and the publisher the outbox
 * relay feeds it through. On close, clients get 3001 (reconnect) first; the broker closes last,
 * after the relay (a child plugin) has stopped.
 */
export async function setUpRealtime(
  app: FastifyInstance,
  config: Readonly<Config>,
  database: Database,
  tokens: RealtimeTokens,
  metrics: Metrics,
  /** A worker of `serve --workers N` without Redis: the broker its primary holds (broker-ipc.ts). */
  sharedBroker?: Broker,
): Promise<Realtime> {
  // Without Redis the history lives in this process and, across restarts, in the outbox. The Redis
  // modules (and ioredis) are loaded only when REDIS_URL is set.
  const memory = config.redisUrl || sharedBroker ? null : new MemoryBroker();
  const broker: Broker = observedBroker(
    sharedBroker ?? memory ?? (await redisBroker(config, app.log)),
    metrics,
  );
  const history = historyOptions(config);
  const node = new RealtimeNode({
    tokens,
    broker,
    version: REALTIME_VERSION,
    logger: app.log,
    history: { size: history.historySize, ttlMs: history.historyTtlMs, metaTtlMs: history.historyMetaTtlMs },
  });
  if (memory) await restoreStreams(memory, database, history);
  node.attach(app.server);
  tokens.onRevoked((revoked) => node.disconnectWhere(revoked));
  node.onRecovery((recovered) => metrics.recovery(recovered));
  const publisher = eventPublisher(node, { inProcess: memory !== null });

  app.addHook('preClose', async () => {
    await node.shutdown();
  });
  app.addHook('onClose', async () => {
    await broker.close();
  });
  return { node, broker, publisher, historyInDatabase: memory !== null };
}

/** Size and TTLs of recoverable channels' history, as the configuration sets them. */
export function historyOptions(config: Pick<Config, 'historySize' | 'historyTtl'>): PublishOptions {
  return { historySize: config.historySize, historyTtlMs: config.historyTtl * 1000, historyMetaTtlMs: HISTORY_META_TTL_MS };
}

/** How long a channel's epoch and offset outlive its last publication or history read. */
const HISTORY_META_TTL_MS = 30 * 24 * 3600_000;

/** The Redis broker of REDIS_URL (ioredis is loaded only then). */
export async function redisBroker(config: Readonly<Config>, logger: { error(obj: object, msg?: string): void }): Promise<Broker> {
  const { RedisBroker } = await import('./broker-redis.js');
  return new RedisBroker({ url: config.redisUrl!, prefix: `${config.redisPrefix}.rt`, logger });
}

/** The in-memory broker continues the streams the outbox kept (the relay records offsets and tops). */
export async function restoreStreams(memory: MemoryBroker, database: Database, h: PublishOptions): Promise<void> {
  const now = Date.now();
  memory.restore(await loadChannelHistories(database.db, { since: now - h.historyTtlMs, size: h.historySize, streamsSince: now - h.historyMetaTtlMs }), h);
}

/**
 * The node as the outbox relay sees it. A stored event's payload is JSON text: it goes to every
 * channel of the event as it is. Its outbox identity keys the publication, so publishing it again
 * after a crash makes no second one (with its creation time: a database recreated from scratch
 * reuses ids, and Redis may still remember them).
 */
export function eventPublisher(node: Pick<RealtimeNode, 'publishEncoded'> & Partial<Pick<RealtimeNode, 'flushFanOut'>>, opts: { inProcess?: boolean } = {}): EventPublisher {
  return {
    inProcess: opts.inProcess ?? false,
    publish: (event) => {
      const key = `${event.id}@${event.createdAt}`;
      return Promise.all(event.channels.map((channel) => node.publishEncoded(channel, event.payload, key)));
    },
    ...(node.flushFanOut ? { flush: () => node.flushFanOut!() } : {}),
  };
}
