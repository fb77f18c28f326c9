import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Broker } from '../../src/realtime/broker.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { RealtimeNode, type RealtimeOptions } from '../../src/realtime/node.js';
import { signChannelToken } from '../../src/security/jwt.js';
import { REDIS_URL } from '../helper.js';

export const SECRET = 'test-secret-0123456789abcdef';

export interface TestServer {
  node: RealtimeNode;
  server: http.Server;
  broker: Broker;
  port: number;
  wsUrl: string;
  httpUrl: string;
  close(): Promise<void>;
}

/**
 * A real HTTP server on a free 127.0.0.1 port with the node attached, plus a tiny stand-in for the
 * `/api/v1/centrifuge/subscribe` route (spec §4.9) that mints channel tokens for any channel:
 * body `{client, channels}` → `{channels:[{channel, token}]}`; `sub` comes from `?user=`.
 */
export async function startServer(opts: Partial<RealtimeOptions> = {}, ownBroker = true): Promise<TestServer> {
  const broker = opts.broker ?? new MemoryBroker();
  const node = new RealtimeNode({ tokenSecret: SECRET, version: 'test', ...opts, broker });
  const server = http.createServer(async (req, res) => {
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
  });
  node.attach(server);
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
      await node.shutdown();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (ownBroker) await broker.close();
    },
  };
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
