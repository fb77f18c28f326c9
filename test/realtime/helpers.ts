import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Broker } from '../../src/realtime/broker.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { RealtimeNode, type RealtimeOptions } from '../../src/realtime/node.js';
import { signChannelToken } from '../../src/security/jwt.js';
import { REDIS_URL } from '../helper.js';
import { defaultTestWorkers } from '../process.js';
import { type TestNode, workersTopology } from './workers-topology.js';

export const SECRET = 'test-secret-0123456789abcdef';

export interface TestServer {
  /** The node, or under the workers switch the nodes together (workers-topology.ts). */
  node: TestNode;
  server: http.Server;
  broker: Broker;
  port: number;
  wsUrl: string;
  httpUrl: string;
  close(): Promise<void>;
}

/**
 * A tiny stand-in for the `/api/v1/centrifuge/subscribe` route (spec §4.9) that mints channel tokens
 * for any channel: body `{client, channels}` → `{channels:[{channel, token}]}`; `sub` comes from `?user=`.
 */
async function subscribeRoute(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.method === 'POST' && req.url?.startsWith('/subscribe')) {
    let body = '';
    for await (const chunk of req) body += chunk;
    const { client, channels } = JSON.parse(body) as { client: string; channels: string[] };
    const user = new URL(req.url, 'http://x').searchParams.get('user') ?? undefined;
    const out = await Promise.all(
      channels.map(async (channel) => ({ channel, token: await signChannelToken(SECRET, { client, channel, sub: user }) })),
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ channels: out }));
    return;
  }
  res.writeHead(404).end();
}

/**
 * A real HTTP server on a free 127.0.0.1 port with the node attached, plus the subscribe stand-in.
 *
 * With OPENALERTS_TEST_WORKERS=N (test/workers-switch.ts) it is the topology of `serve --workers N`
 * without Redis instead: `broker` (or a MemoryBroker) is the primary's, behind its BrokerAuthority,
 * and N nodes reach it over real IPC channels, taking the incoming connections in turn
 * (workers-topology.ts). A Redis broker is shared by nodes without the primary: one node then.
 */
export async function startServer(opts: Partial<RealtimeOptions> = {}, ownBroker = true): Promise<TestServer> {
  const broker = opts.broker ?? new MemoryBroker();
  const workers = defaultTestWorkers();
  const server = http.createServer((req, res) => void subscribeRoute(req, res));
  let node: TestNode;
  let closeNodes: () => Promise<void>;
  if (workers > 1 && broker instanceof MemoryBroker) {
    const topology = await workersTopology(workers, broker, { tokenSecret: SECRET, version: 'test', ...opts });
    topology.attach(server);
    node = topology.node;
    closeNodes = () => topology.close();
  } else {
    const single = new RealtimeNode({ tokenSecret: SECRET, version: 'test', ...opts, broker });
    single.attach(server);
    node = single;
    closeNodes = () => single.shutdown();
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    node,
    server,
    broker,
    port,
    wsUrl: `ws://127.0.0.1:${port}/connection/websocket`,
    httpUrl: `http://127.0.0.1:${port}`,
    async close() {
      await closeNodes();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (ownBroker) await broker.close();
    },
  };
}

/**
 * Test options for a case that inspects one node's own scheduling, which the workers topology
 * does not have in the same form: skipped there, with the reason (its cross-node counterpart is
 * in workers-topology.test.ts).
 */
export function singleNodeOnly(reason: string): { skip?: string } {
  return defaultTestWorkers() > 1 ? { skip: `one node only: ${reason}` } : {};
}

/**
 * The Redis at TEST_REDIS_URL (default 127.0.0.1:6379), or null when unreachable — then Redis tests
 * skip locally, but fail when the CI env var is set.
 */
export async function redisOrSkip(): Promise<Redis | null> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return r;
  } catch (err) {
    r.disconnect();
    if (process.env.CI) throw new Error(`Redis required in CI but unreachable: ${String(err)}`);
    return null;
  }
}

export function uniquePrefix(name: string): string {
  return `oa-test.${name}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
}

/** Deletes every key under `prefix`. */
export async function cleanRedis(r: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}.*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await r.del(...keys);
  } while (cursor !== '0');
}
