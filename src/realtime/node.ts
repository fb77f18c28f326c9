import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { JWTPayload } from 'jose';
import { TokenVerifier } from '../security/jwt.js';
import type { Broker, PublishOptions, StreamPosition } from './broker.js';
import { Client, type ClientContext, type TokenCheck } from './client.js';
import { DisconnectRevoked, DisconnectShutdown, type Disconnect } from './disconnect.js';
import { Hub } from './hub.js';
import { WsTransport } from './transport.js';

type Logger = { info(...a: any[]): void; warn(...a: any[]): void; error(...a: any[]): void; debug?(...a: any[]): void };

export interface RealtimeOptions {
  /** HS256 secret for connection and channel JWTs; signature and expiry are all that is checked. */
  tokenSecret?: string;
  /** Or the full token check (the app's: revocation too). One of the two is required. */
  tokens?: TokenCheck;
  /** Memory (one node) or Redis (several nodes). Not closed by `shutdown()`: its owner closes it. */
  broker: Broker;
  /** Reported in the connect reply (spec §9). */
  version?: string;
  logger?: Logger;
  /** Largest incoming frame; a bigger one closes the socket with 1009 (RFC 6455). Default 64 KiB. */
  maxMessageBytes?: number;
  /** Default 128; one more is error 106. */
  maxSubscriptionsPerClient?: number;
  /** Default 25000 (compatibility.md §5: not connected in 25 s → closed with 3502). */
  connectTimeoutMs?: number;
  /** Server ping period: legacy protocol a WebSocket ping frame, modern `{}`. Default 25000. */
  pingIntervalMs?: number;
  /** A ping unanswered this long closes with 3012 "no pong". Default 10000. */
  pongTimeoutMs?: number;
  /**
   * Longest stretch of fan-out work before the event loop gets a turn (HTTP, database replies,
   * timers). Default 5 ms.
   */
  fanoutSliceMs?: number;
  /** Bytes a socket may have queued unsent before it is closed as slow (3008). Default 1 MiB. */
  maxQueueBytes?: number;
  /** Default: channels starting with "$alerts:", "$goals:", "$polls:" or "$widget:" (compatibility.md §5). */
  recoverableChannel?: (channel: string) => boolean;
  /** History of recoverable channels: size (default 100), TTL after the last publication (default
   * 10 min), and how long epoch/offset outlive it (default 30 days). */
  history?: { size?: number; ttlMs?: number; metaTtlMs?: number };
}

const RECOVERABLE_PREFIXES = ['$alerts:', '$goals:', '$polls:', '$widget:'];

export function defaultRecoverableChannel(channel: string): boolean {
  return RECOVERABLE_PREFIXES.some((p) => channel.startsWith(p));
}

// Socket listeners are shared functions, not per-connection closures (≤ 8 KB per idle connection).
const kClient = Symbol('client');
type Socket = WebSocket & { [kClient]: Client };
function onMessage(this: WebSocket, data: RawData): void {
  (this as Socket)[kClient].handleFrame(data.toString());
}
function onPong(this: WebSocket): void {
  (this as Socket)[kClient].handlePong();
}
function onClose(this: WebSocket): void {
  (this as Socket)[kClient].closed();
}

const NO_HISTORY: PublishOptions = { historySize: 0, historyTtlMs: 0, historyMetaTtlMs: 0 };
const noop = (): void => {};

/**
 * A Centrifugo-compatible real-time node: WebSocket endpoint speaking the legacy (centrifuge-js 2.x)
 * and modern (centrifuge-js ≥ 3) JSON protocols, fed by a broker.
 */
export class RealtimeNode {
  private readonly broker: Broker;
  private readonly hub: Hub;
  private readonly ctx: ClientContext;
  private readonly logger: Logger;
  private readonly maxPayload: number;
  /** Created by the first upgrade (ws-server.ts); `wssReady` once it is there. */
  private wss: Promise<WebSocketServer> | null = null;
  private wssReady: WebSocketServer | null = null;
  private readonly clients = new Set<Client>();
  /** Size and TTLs of recoverable channels' history. */
  readonly historyOptions: PublishOptions;
  private readonly sweeper: NodeJS.Timeout;
  private readonly attached: { server: Server; listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void }[] = [];
  private readonly recoveryListeners = new Set<(recovered: boolean) => void>();
  private connectedCount = 0;
  private stopping = false;

  constructor(opts: RealtimeOptions) {
    this.broker = opts.broker;
    this.logger = opts.logger ?? { info: noop, warn: noop, error: noop };
    const logger = this.logger;
    this.hub = new Hub(this.broker, (err, channel) => logger.error({ err, channel }, 'realtime: broker subscription failed'), opts.fanoutSliceMs ?? 5);
    this.historyOptions = {
      historySize: opts.history?.size ?? 100,
      historyTtlMs: opts.history?.ttlMs ?? 10 * 60_000,
      historyMetaTtlMs: opts.history?.metaTtlMs ?? 30 * 24 * 3600_000,
    };
    const recoverable = opts.recoverableChannel ?? defaultRecoverableChannel;
    const pingIntervalMs = opts.pingIntervalMs ?? 25_000;
    const connectTimeoutMs = opts.connectTimeoutMs ?? 25_000;
    const pongTimeoutMs = opts.pongTimeoutMs ?? 10_000;
    this.ctx = {
      hub: this.hub,
      broker: this.broker,
      tokens: opts.tokens ?? signatureOnly(opts.tokenSecret),
      version: opts.version ?? 'openalerts',
      logger,
      maxSubscriptions: opts.maxSubscriptionsPerClient ?? 128,
      maxQueueBytes: opts.maxQueueBytes ?? 1024 * 1024,
      connectTimeoutMs,
      pingIntervalMs,
      pongTimeoutMs,
      historyMetaTtlMs: this.historyOptions.historyMetaTtlMs,
      recoverable,
      onConnected: () => {
        this.connectedCount++;
      },
      onClosed: (c) => {
        if (this.clients.delete(c) && c.id !== '') this.connectedCount--;
      },
      onRecovery: (recovered) => {
        for (const listener of this.recoveryListeners) listener(recovered);
      },
    };
    this.broker.setHandler((channel, pub) => this.hub.broadcast(channel, pub));
    this.maxPayload = opts.maxMessageBytes ?? 64 * 1024;
    // One timer for every client (no per-connection timers): connect timeout, pings, pong timeout.
    const sweepMs = Math.max(10, Math.min(1000, Math.floor(Math.min(pingIntervalMs, connectTimeoutMs, pongTimeoutMs) / 4)));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const c of this.clients) c.tick(now);
    }, sweepMs);
    this.sweeper.unref();
  }

  /** Handles HTTP upgrades for `path` only (query string ignored); other upgrades are left alone. */
  attach(server: Server, path = '/connection/websocket'): void {
    const listener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      if ((q < 0 ? url : url.slice(0, q)) !== path) return;
      if (this.stopping) {
        socket.destroy();
        return;
      }
      // compatibility.md §5: `?cf_protocol_version=v2` selects the modern protocol before any frame.
      const forceV2 = q >= 0 && new URLSearchParams(url.slice(q + 1)).get('cf_protocol_version') === 'v2';
      const upgrade = (wss: WebSocketServer) => wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, forceV2));
      if (this.wssReady) return upgrade(this.wssReady);
      // The first upgrade waits for the server to load. Until ws takes the socket nothing listens
      // for its errors (the HTTP server let go of it): a reset meanwhile must not be uncaught.
      const dropped = () => socket.destroy();
      socket.on('error', dropped);
      this.webSocketServer().then(
        (wss) => {
          socket.off('error', dropped);
          if (this.stopping) socket.destroy();
          else upgrade(wss);
        },
        (err) => {
          this.logger.error({ err }, 'realtime: the WebSocket server could not be loaded');
          socket.destroy();
        },
      );
    };
    server.on('upgrade', listener);
    this.attached.push({ server, listener });
  }

  private webSocketServer(): Promise<WebSocketServer> {
    this.wss ??= import('./ws-server.js').then(
      ({ webSocketServer }) => (this.wssReady = webSocketServer(this.maxPayload)),
      (err) => {
        this.wss = null; // the next upgrade tries again
        throw err;
      },
    );
    return this.wss;
  }

  private accept(ws: WebSocket, forceV2: boolean): void {
    if (this.stopping) {
      ws.close(DisconnectShutdown.code, DisconnectShutdown.closeReason);
      return;
    }
    const client = new Client(this.ctx, new WsTransport(ws), forceV2);
    this.clients.add(client);
    (ws as Socket)[kClient] = client;
    ws.on('message', onMessage);
    ws.on('pong', onPong);
    ws.on('close', onClose);
    ws.on('error', onClose);
  }

  /** Publishes to every subscriber on every node; the payload is JSON-encoded once, here. */
  async publish(channel: string, data: unknown): Promise<StreamPosition> {
    const encoded = JSON.stringify(data);
    if (encoded === undefined) throw new TypeError('realtime publish: payload is not JSON-serializable');
    return this.publishEncoded(channel, encoded);
  }

  /**
   * Publishes a payload that is already JSON text (as the outbox stores it): it reaches the socket
   * frames byte for byte, never parsed or re-encoded. `key` identifies the publication: the same key
   * again returns the first position instead of publishing twice (Broker.publish).
   */
  publishEncoded(channel: string, json: string, key?: string): Promise<StreamPosition> {
    const opts = this.ctx.recoverable(channel) ? this.historyOptions : NO_HISTORY;
    return this.broker.publish(channel, json, opts, key);
  }

  /** Sends what was just published to this node's subscribers now rather than in the check phase (Hub.flush). */
  flushFanOut(): void {
    this.hub.flush();
  }

  /** Closes every client with 3001 {"reason":"shutdown","reconnect":true}; waits (≤ 2 s) for the sockets. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.sweeper);
    for (const { server, listener } of this.attached) server.off('upgrade', listener);
    const all = [...this.clients];
    for (const c of all) c.close(DisconnectShutdown);
    this.broker.setHandler(null);
    const wss = this.wssReady;
    if (wss) await new Promise<void>((resolve) => wss.close(() => resolve()));
    await waitForSockets(all, 2000);
  }

  /**
   * Closes every client (connected or still connecting) holding a token whose claims `match` —
   * what the token was issued under was revoked. Returns how many were closed.
   */
  disconnectWhere(match: (claims: JWTPayload) => boolean, d: Disconnect = DisconnectRevoked): number {
    let closed = 0;
    for (const c of this.clients) {
      if (c.heldUnder(match)) {
        c.close(d);
        closed++;
      }
    }
    return closed;
  }

  /** Publications that reached this node and are not yet sent to all their subscribers (tests, metrics). */
  get pendingPublications(): number {
    return this.hub.pendingPublications;
  }

  stats(): { clients: number; subscriptions: number } {
    return { clients: this.connectedCount, subscriptions: this.hub.subscriptions };
  }

  /** Open sockets by protocol; `undetected` until a socket's first frame tells (metrics, read at scrape). */
  socketsByProtocol(): Record<'legacy' | 'v2' | 'undetected', number> {
    const counts = { legacy: 0, v2: 0, undetected: 0 };
    for (const c of this.clients) counts[c.codec === null ? 'undetected' : c.legacy ? 'legacy' : 'v2']++;
    return counts;
  }

  /** Calls `listener` for each subscribe that asked to recover missed publications (metrics). */
  onRecovery(listener: (recovered: boolean) => void): () => void {
    this.recoveryListeners.add(listener);
    return () => this.recoveryListeners.delete(listener);
  }
}

function signatureOnly(secret: string | undefined): TokenCheck {
  if (secret === undefined) throw new Error('RealtimeNode needs tokenSecret or tokens');
  const verifier = new TokenVerifier(secret);
  return { verify: async (token) => verifier.verify(token), allowed: async () => true };
}

/** Waits until the close handshakes finished; sockets still open after `ms` are destroyed. */
async function waitForSockets(clients: Client[], ms: number): Promise<void> {
  const transports = clients.map((c) => c.transport).filter((t): t is WsTransport => t instanceof WsTransport);
  await Promise.all(transports.map((t) => t.closedWithin(ms)));
}
