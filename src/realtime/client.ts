import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { TokenExpiredError } from '../security/jwt.js';
import type { Broker, Publication } from './broker.js';
import {
  Disconnect, DisconnectBadRequest, DisconnectInsufficientState, DisconnectInvalidToken, DisconnectNoPong, DisconnectNormal, DisconnectRevoked, DisconnectServerError, DisconnectSlow, DisconnectStale,
} from './disconnect.js';
import {
  ClientError, ErrorAlreadySubscribed, ErrorBadRequest, ErrorInternal, ErrorLimitExceeded, ErrorMethodNotFound, ErrorNotAvailable,
  ErrorPermissionDenied, ErrorTokenExpired, ErrorUnauthorized, ErrorUnrecoverablePosition,
} from './errors.js';
import { Subscription, type Hub, type HubClient } from './hub.js';
import { isObject, type Codec, type Command, type Method, type SubscribeResult } from './protocol/codec.js';
import { legacyCodec } from './protocol/legacy.js';
import { FLAG_REJECT_UNRECOVERED, v2Codec } from './protocol/v2.js';
import type { Transport } from './transport.js';

/**
 * How the node checks connection and channel tokens: `verify` the signature and expiry (throwing
 * TokenExpiredError or TokenInvalidError), then ask whether what the token was issued under still
 * stands (`allowed`: not revoked). Outside this folder (modules/realtime-tokens) in the app.
 */
export interface TokenCheck {
  verify(token: string): Promise<JWTPayload>;
  allowed(claims: JWTPayload): Promise<boolean>;
}

/** What the node shares with its clients. */
export interface ClientContext {
  readonly hub: Hub;
  readonly broker: Broker;
  readonly tokens: TokenCheck;
  readonly version: string;
  readonly logger: { error(...a: any[]): void; debug?(...a: any[]): void };
  readonly maxSubscriptions: number;
  readonly maxQueueBytes: number;
  readonly connectTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly pongTimeoutMs: number;
  readonly historyMetaTtlMs: number;
  recoverable(channel: string): boolean;
  onConnected(client: Client): void;
  onClosed(client: Client): void;
  /** A subscribe asked to recover; `recovered` when history still held every missed publication. */
  onRecovery(recovered: boolean): void;
}

const CONNECTING = 0;
const CONNECTED = 1;
const CLOSED = 2;

/** Longest channel name accepted (Centrifugo's default `channel_max_length`). */
const MAX_CHANNEL_LENGTH = 255;

type Handler<M extends Method> = (c: Client, cmd: Extract<Command, { method: M }>) => void | Promise<void>;

/**
 * One WebSocket connection. Commands of a connection are handled one at a time in arrival order, so
 * replies and pushes go out in command order. A handler throws a `Disconnect` to close the connection,
 * a `ClientError` to answer with an error; anything else answers 100 and is logged (architecture.md
 * convention 3).
 */
export class Client implements HubClient {
  id = '';
  user = '';
  legacy = true;
  codec: Codec | null;
  readonly subs = new Map<string, Subscription>();
  private state = CONNECTING;
  private readonly createdAt = Date.now();
  private lastPingAt = 0;
  /** When the unanswered server ping was sent; 0 when any frame or pong came after it. */
  private pingSentAt = 0;
  private queue: Promise<void> | null = null;
  /**
   * Claims of the tokens this connection holds — the connection token's and each channel's —
   * recorded before they are checked, so a revocation that arrives while a check runs still finds
   * this client (`heldUnder`).
   */
  private connectionClaims: JWTPayload | null = null;
  private readonly channelClaims = new Map<string, JWTPayload>();

  constructor(
    private readonly ctx: ClientContext,
    readonly transport: Transport,
    forceV2: boolean,
  ) {
    this.codec = forceV2 ? v2Codec : null;
    this.legacy = !forceV2;
  }

  get connected(): boolean {
    return this.state === CONNECTED;
  }

  /** A text frame from the socket. */
  handleFrame(data: string): void {
    if (this.state === CLOSED) return;
    this.pingSentAt = 0;
    let cmds: Command[];
    try {
      if (this.codec === null) this.detectProtocol(data);
      cmds = this.codec!.decode(data);
    } catch (err) {
      this.close(err instanceof Disconnect ? err : DisconnectBadRequest);
      return;
    }
    if (cmds.length === 0) return;
    const run = (): Promise<void> => this.runCommands(cmds);
    const q = this.queue ? this.queue.then(run) : run();
    this.queue = q;
    void q.then(() => {
      if (this.queue === q) this.queue = null;
    });
  }

  /** WebSocket pong frame: answers a legacy-protocol server ping. */
  handlePong(): void {
    this.pingSentAt = 0;
  }

  /** Called by the node's sweep: connect timeout, server pings, unanswered pings. */
  tick(now: number): void {
    if (this.state === CONNECTING) {
      if (now - this.createdAt >= this.ctx.connectTimeoutMs) this.close(DisconnectStale);
      return;
    }
    if (this.state !== CONNECTED) return;
    if (this.pingSentAt !== 0 && now - this.pingSentAt >= this.ctx.pongTimeoutMs) {
      this.close(DisconnectNoPong);
      return;
    }
    if (now - this.lastPingAt >= this.ctx.pingIntervalMs) {
      this.lastPingAt = now;
      if (this.pingSentAt === 0) this.pingSentAt = now;
      const ping = this.codec!.serverPing;
      if (ping === null) this.transport.ping();
      else this.send(ping);
    }
  }

  /** HubClient: a publication frame already encoded for this client's protocol. */
  deliver(frame: Buffer): void {
    if (this.state === CLOSED) return;
    this.transport.send(frame);
    if (this.transport.bufferedAmount > this.ctx.maxQueueBytes) this.close(DisconnectSlow);
  }

  /** HubClient: a publication of `channel` never reached this node; the client recovers it after reconnecting. */
  missed(channel: string): void {
    if (this.state === CLOSED) return;
    this.ctx.logger.error({ channel, client: this.id }, 'realtime: a publication never reached this node; closing with 3010 so the client recovers it');
    this.close(DisconnectInsufficientState);
  }

  send(frame: string): void {
    if (this.state === CLOSED) return;
    this.transport.send(frame);
    if (this.transport.bufferedAmount > this.ctx.maxQueueBytes) this.close(DisconnectSlow);
  }

  /** Whether any token this connection holds (or is checking) has claims that `match`. */
  heldUnder(match: (claims: JWTPayload) => boolean): boolean {
    if (this.connectionClaims !== null && match(this.connectionClaims)) return true;
    for (const claims of this.channelClaims.values()) if (match(claims)) return true;
    return false;
  }

  /** Closes the socket with the disconnect's code and JSON reason, and leaves every channel. */
  close(d: Disconnect = DisconnectNormal): void {
    if (this.state === CLOSED) return;
    this.transport.close(d);
    this.closed();
  }

  /** The socket closed (either side): leave every channel. Idempotent. */
  closed(): void {
    if (this.state === CLOSED) return;
    this.state = CLOSED;
    for (const sub of this.subs.values()) this.ctx.hub.remove(sub);
    this.subs.clear();
    this.ctx.onClosed(this);
  }

  /** compatibility.md §5: a first frame with a `connect` key means the modern protocol, otherwise legacy. */
  private detectProtocol(frame: string): void {
    const nl = frame.indexOf('\n');
    const first = JSON.parse(nl < 0 ? frame : frame.slice(0, nl)) as unknown;
    const v2 = isObject(first) && first.connect !== undefined;
    this.codec = v2 ? v2Codec : legacyCodec;
    this.legacy = !v2;
  }

  private async runCommands(cmds: Command[]): Promise<void> {
    for (const cmd of cmds) {
      if (this.state === CLOSED) return;
      if (cmd.method === 'pong') continue;
      try {
        // compatibility.md §5: the first command must be connect.
        if (this.state === CONNECTING && cmd.method !== 'connect') throw DisconnectBadRequest;
        await (HANDLERS[cmd.method] as Handler<Method>)(this, cmd as never);
      } catch (err) {
        this.fail(cmd, err);
      }
    }
  }

  private fail(cmd: Command, err: unknown): void {
    if (err instanceof Disconnect) {
      this.close(err);
      return;
    }
    let e: ClientError;
    if (err instanceof ClientError) e = err;
    else {
      this.ctx.logger.error({ err, method: cmd.method, client: this.id }, 'realtime: command failed');
      e = ErrorInternal;
    }
    this.reply(cmd, this.codec!.errorReply(cmd.id, e));
  }

  /** Replies only to commands that carry an id. */
  reply(cmd: Command, frame: string): void {
    if (cmd.id !== undefined && cmd.id !== null) this.send(frame);
  }

  /**
   * Connection token: expired → 109 (the client gets a new one), anything else invalid → 3500;
   * revoked (its grant, account or widget token) → 3500 "token revoked". Becomes the connection's
   * token before the revocation check, so a revocation during the check closes this client too.
   */
  async acceptConnectionToken(token: string | undefined): Promise<string> {
    if (!token) throw DisconnectBadRequest;
    let claims: JWTPayload;
    try {
      claims = await this.ctx.tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenExpiredError) throw ErrorTokenExpired;
      throw DisconnectInvalidToken;
    }
    this.connectionClaims = claims;
    if (!(await this.ctx.tokens.allowed(claims))) throw DisconnectRevoked;
    return typeof claims.sub === 'string' ? claims.sub : '';
  }

  /**
   * Channel token (compatibility.md §5): `channel` claim must match; legacy protocol: `client` claim must
   * be this connection's id (Centrifugo v2); modern: `sub` must be this connection's user and
   * `client` is not checked (Centrifugo v4+; centrifuge-js 5 reuses a token after reconnecting).
   */
  async authorizeChannel(channel: string, token: string | undefined): Promise<JWTPayload> {
    if (!token) throw ErrorPermissionDenied;
    let claims;
    try {
      claims = await this.ctx.tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenExpiredError) throw ErrorTokenExpired;
      throw DisconnectInvalidToken;
    }
    if (claims.channel !== channel) throw ErrorPermissionDenied;
    if (this.legacy ? claims.client !== this.id : (claims.sub ?? '') !== this.user) throw ErrorPermissionDenied;
    return claims;
  }

  /**
   * Makes `claims` the channel's token, then checks that what it was issued under still stands:
   * 101 unauthorized when revoked (the previous token of the channel, if any, is kept).
   */
  private async holdChannelToken(channel: string, claims: JWTPayload): Promise<void> {
    const previous = this.channelClaims.get(channel);
    this.channelClaims.set(channel, claims);
    let allowed = false;
    try {
      allowed = await this.ctx.tokens.allowed(claims);
    } finally {
      if (!allowed) {
        if (previous) this.channelClaims.set(channel, previous);
        else this.channelClaims.delete(channel);
      }
    }
    if (!allowed) throw ErrorUnauthorized;
  }

  async connect(cmd: Extract<Command, { method: 'connect' }>): Promise<void> {
    if (this.state !== CONNECTING) throw DisconnectBadRequest;
    const user = await this.acceptConnectionToken(cmd.token);
    if (this.state !== CONNECTING) return;
    this.user = user;
    this.id = randomUUID();
    this.state = CONNECTED;
    this.lastPingAt = Date.now();
    this.ctx.onConnected(this);
    const pingSeconds = Math.max(1, Math.round(this.ctx.pingIntervalMs / 1000));
    this.reply(cmd, this.codec!.connectReply(cmd.id, { client: this.id, version: this.ctx.version, pingSeconds }));
  }

  async subscribe(cmd: Extract<Command, { method: 'subscribe' }>): Promise<void> {
    const channel = cmd.channel;
    if (!channel) throw DisconnectBadRequest;
    if (channel.length > MAX_CHANNEL_LENGTH) throw ErrorBadRequest;
    if (this.subs.has(channel)) throw ErrorAlreadySubscribed;
    if (this.subs.size >= this.ctx.maxSubscriptions) throw ErrorLimitExceeded;
    await this.holdChannelToken(channel, await this.authorizeChannel(channel, cmd.token));
    if (this.state !== CONNECTED) return;
    if (this.subs.has(channel)) throw ErrorAlreadySubscribed;

    const recoverable = this.ctx.recoverable(channel);
    const sub = new Subscription(this, channel);
    if (recoverable) sub.buffer = [];
    this.subs.set(channel, sub);
    let result: SubscribeResult = { recoverable: false, offset: 0, epoch: '', wasRecovering: false, publications: [] };
    let top = { offset: 0, epoch: '' };
    try {
      await this.ctx.hub.add(sub);
      if (recoverable) {
        const metaTtl = this.ctx.historyMetaTtlMs;
        if (cmd.recover) {
          const h = await this.ctx.broker.history(channel, { since: { offset: cmd.offset }, historyMetaTtlMs: metaTtl });
          top = h.position;
          const pubs = h.publications;
          // Recovered only when history still holds every publication after the client's position
          // in the same epoch (centrifuge `isStreamRecovered`).
          const recovered =
            (cmd.epoch === '' || cmd.epoch === top.epoch) &&
            (pubs.length === 0
              ? top.offset === cmd.offset
              : pubs[0].offset === cmd.offset + 1 && pubs[pubs.length - 1].offset === top.offset);
          this.ctx.onRecovery(recovered);
          if (!recovered && !this.legacy && (cmd.flag & FLAG_REJECT_UNRECOVERED) !== 0) throw ErrorUnrecoverablePosition;
          result = {
            recoverable: true,
            epoch: top.epoch,
            // Legacy: the current top. Modern: after a recovery, the position recovered from; the
            // publications move it (centrifuge `subscribeCmd`).
            offset: recovered && !this.legacy ? cmd.offset : top.offset,
            recovered,
            wasRecovering: true,
            publications: recovered ? pubs : [],
          };
        } else {
          top = (await this.ctx.broker.history(channel, { limit: 0, historyMetaTtlMs: metaTtl })).position;
          result = { recoverable: true, epoch: top.epoch, offset: top.offset, wasRecovering: false, publications: [] };
        }
      }
    } catch (err) {
      if (this.subs.get(channel) === sub) this.subs.delete(channel);
      this.channelClaims.delete(channel);
      this.ctx.hub.remove(sub);
      if (err instanceof ClientError || err instanceof Disconnect) throw err;
      // The broker failed (Redis down or not answering within its bound). Centrifugo closes the
      // connection with 3004 then (centrifuge `subscribeCmd`: "error adding subscription", "error on
      // recover"), not error 100: centrifuge-js 2.x leaves a subscription that got an error reply
      // failed for good, while 3004 asks every client library to reconnect after its back-off and
      // subscribe again, recovering what it missed.
      this.ctx.logger.error({ err, channel, client: this.id }, 'realtime: subscribe failed in the broker; closing with 3004');
      throw DisconnectServerError;
    }
    if (this.state !== CONNECTED || this.subs.get(channel) !== sub) {
      this.ctx.hub.remove(sub);
      return;
    }
    const codec = this.codec!;
    this.reply(cmd, codec.subscribeReply(cmd.id, result));
    // compatibility.md §5: the reply, then the JOIN push (legacy always; modern when asked with join_leave).
    if (cmd.joinLeave) this.send(codec.joinPush(channel, { user: this.user, client: this.id }));
    // The reply covered the stream up to its top: from here on the hub sends only what is past it.
    sub.offset = top.offset;
    sub.epoch = top.epoch;
    const buffered = sub.buffer;
    sub.buffer = null;
    if (buffered) this.sendBuffered(sub, buffered);
  }

  /** Publications that reached the hub while subscribing, after those the reply covered. */
  private sendBuffered(sub: Subscription, pubs: Publication[]): void {
    for (const p of pubs) {
      if (sub.advance(p)) this.send(this.codec!.publicationPush(sub.channel, p));
    }
  }

  unsubscribe(cmd: Extract<Command, { method: 'unsubscribe' }>): void {
    if (!cmd.channel) throw DisconnectBadRequest;
    const sub = this.subs.get(cmd.channel);
    if (sub) {
      this.subs.delete(cmd.channel);
      this.channelClaims.delete(cmd.channel);
      this.ctx.hub.remove(sub);
    }
    this.reply(cmd, this.codec!.emptyReply(cmd.id, 'unsubscribe'));
  }

  /** A broker failure answers error 100 (temporary in v2), as Centrifugo's history command does. */
  async history(cmd: Extract<Command, { method: 'history' }>): Promise<void> {
    const channel = cmd.channel;
    if (!channel) throw DisconnectBadRequest;
    if (!this.subs.has(channel)) throw ErrorPermissionDenied;
    if (!this.ctx.recoverable(channel)) throw ErrorNotAvailable;
    const h = await this.ctx.broker.history(channel, {
      since: cmd.since ? { offset: cmd.since.offset } : undefined,
      limit: cmd.reverse ? undefined : cmd.limit,
      historyMetaTtlMs: this.ctx.historyMetaTtlMs,
    });
    if (cmd.since && cmd.since.epoch !== '' && cmd.since.epoch !== h.position.epoch) throw ErrorUnrecoverablePosition;
    let pubs = h.publications;
    if (cmd.reverse) {
      pubs = pubs.slice().reverse();
      if (cmd.limit !== undefined) pubs = pubs.slice(0, cmd.limit);
    }
    this.reply(cmd, this.codec!.historyReply(cmd.id, { publications: pubs, offset: h.position.offset, epoch: h.position.epoch }));
  }

  /** A new connection token. Connection lifetime is not bounded by `exp` (no refresh is demanded). */
  async refresh(cmd: Extract<Command, { method: 'refresh' }>): Promise<void> {
    const user = await this.acceptConnectionToken(cmd.token);
    if (user !== this.user) throw DisconnectInvalidToken;
    this.reply(cmd, this.codec!.refreshReply(cmd.id, { client: this.id, version: this.ctx.version }));
  }

  async subRefresh(cmd: Extract<Command, { method: 'sub_refresh' }>): Promise<void> {
    if (!cmd.channel) throw DisconnectBadRequest;
    if (!this.subs.has(cmd.channel)) throw ErrorPermissionDenied;
    await this.holdChannelToken(cmd.channel, await this.authorizeChannel(cmd.channel, cmd.token));
    this.reply(cmd, this.codec!.emptyReply(cmd.id, 'sub_refresh'));
  }
}

const HANDLERS: { [M in Method]: Handler<M> } = {
  connect: (c, cmd) => c.connect(cmd),
  subscribe: (c, cmd) => c.subscribe(cmd),
  unsubscribe: (c, cmd) => c.unsubscribe(cmd),
  history: (c, cmd) => c.history(cmd),
  refresh: (c, cmd) => c.refresh(cmd),
  sub_refresh: (c, cmd) => c.subRefresh(cmd),
  ping: (c, cmd) => c.reply(cmd, c.codec!.emptyReply(cmd.id, 'ping')),
  // Only the server publishes; presence is not kept; no RPC handler.
  publish: () => {
    throw ErrorPermissionDenied;
  },
  presence: () => {
    throw ErrorNotAvailable;
  },
  presence_stats: () => {
    throw ErrorNotAvailable;
  },
  rpc: () => {
    throw ErrorNotAvailable;
  },
  send: () => {},
  unknown: () => {
    throw ErrorMethodNotFound;
  },
  pong: () => {},
};
