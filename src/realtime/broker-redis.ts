import { Redis } from 'ioredis';
import { closeRedis } from '../db/redis.js';
import type { Broker, HistoryOptions, HistoryResult, Publication, PublicationHandler, PublishOptions, StreamPosition } from './broker.js';
import { IDEMPOTENCY_WINDOW, newEpoch } from './broker.js';

/**
 * Multi-node broker over Redis (centrifuge `broker_redis.go`): history in a stream per channel whose
 * entry ids are `<offset>-0`, epoch and last offset in a hash, both updated atomically with the
 * fan-out PUBLISH by one Lua script; every node SUBSCRIBEs to the channels it has subscribers on.
 *
 * Keys (hash-tagged by channel, so both keys of a channel share a cluster slot):
 *   <prefix>.stream.{<channel>}   stream, MAXLEN historySize, PEXPIRE historyTtlMs
 *   <prefix>.meta.{<channel>}     hash e=epoch s=offset, PEXPIRE historyMetaTtlMs
 *   <prefix>.idem.{<channel>}     sorted set: idempotency key → offset, the last IDEMPOTENCY_WINDOW
 *                                 keys, PEXPIRE historyTtlMs
 *   <prefix>.pub.<channel>        pub/sub channel; message "<offset>:<epoch>:<json data>"
 */

// KEYS: stream, meta, idem. ARGV: data, size, ttlMs, metaTtlMs, newEpoch, pubsubChannel, key ('' =
// none), window. A new epoch drops any stream left from the old one, so entry ids always increase. A
// key already published returns its offset and publishes nothing.
const PUBLISH_LUA = `
local epoch = redis.call('hget', KEYS[2], 'e')
if not epoch then
  epoch = ARGV[5]
  redis.call('del', KEYS[1], KEYS[3])
  redis.call('hset', KEYS[2], 'e', epoch)
end
if ARGV[7] ~= '' then
  local published = redis.call('zscore', KEYS[3], ARGV[7])
  if published then return {tonumber(published), epoch} end
end
local offset = redis.call('hincrby', KEYS[2], 's', 1)
if tonumber(ARGV[4]) > 0 then redis.call('pexpire', KEYS[2], ARGV[4]) end
redis.call('xadd', KEYS[1], 'MAXLEN', ARGV[2], offset .. '-0', 'd', ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[3])
redis.call('publish', ARGV[6], offset .. ':' .. epoch .. ':' .. ARGV[1])
if ARGV[7] ~= '' then
  redis.call('zadd', KEYS[3], offset, ARGV[7])
  redis.call('zremrangebyrank', KEYS[3], 0, -(tonumber(ARGV[8]) + 1))
  redis.call('pexpire', KEYS[3], ARGV[3])
end
return {offset, epoch}
`;

// KEYS: stream, meta, idem. ARGV: newEpoch, metaTtlMs, sinceOffset, limit (-1 = all).
const HISTORY_LUA = `
local epoch = redis.call('hget', KEYS[2], 'e')
if not epoch then
  epoch = ARGV[1]
  redis.call('del', KEYS[1], KEYS[3])
  redis.call('hset', KEYS[2], 'e', epoch, 's', 0)
end
if tonumber(ARGV[2]) > 0 then redis.call('pexpire', KEYS[2], ARGV[2]) end
local offset = tonumber(redis.call('hget', KEYS[2], 's') or '0')
local limit = tonumber(ARGV[4])
if limit == 0 then return {offset, epoch, {}} end
local start = (tonumber(ARGV[3]) + 1) .. '-0'
local entries
if limit > 0 then
  entries = redis.call('xrange', KEYS[1], start, '+', 'COUNT', limit)
else
  entries = redis.call('xrange', KEYS[1], start, '+')
end
return {offset, epoch, entries}
`;

export interface RedisBrokerOptions {
  /** A connected-or-lazy client to use for commands (not closed by `close()`), or a URL. */
  redis?: Redis;
  url?: string;
  /** Namespaces every key and pub/sub channel; several deployments can share one Redis. */
  prefix?: string;
  logger?: { error(...a: any[]): void; warn?(...a: any[]): void };
}

/**
 * Bounded waits, the values of the rate limiter's client (src/api/rate-limit.ts): a Redis that
 * accepts connections and never answers must fail a command, not hold it. A subscribe waits for at
 * most two commands (SUBSCRIBE, then the history read), 2 s together — under centrifuge-js's own
 * 5 s command timeout, so the client gets the server's answer (3004, reconnect) rather than giving
 * up by itself. A publish that timed out may still run once Redis answers: the relay's retry
 * carries the same idempotency key, so it makes no second publication. One retry per command
 * across a reconnect; the timeout bounds it whatever the retries.
 */
export const REDIS_BROKER_TIMEOUTS = { connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1 } as const;

type Scripted = Redis & {
  oaPublish(stream: string, meta: string, idem: string, ...args: (string | number)[]): Promise<[number, string]>;
  oaHistory(stream: string, meta: string, idem: string, ...args: (string | number)[]): Promise<[number, string, [string, string[]][]]>;
};

export class RedisBroker implements Broker {
  private readonly cmd: Scripted;
  private readonly sub: Redis;
  private readonly ownsCmd: boolean;
  private readonly prefix: string;
  private readonly pubPrefix: string;
  private handler: PublicationHandler | null = null;
  /**
   * A command timed out and none has answered since: the connection is up but Redis does not
   * answer (stopped, swapping, a stuck script), which ioredis's status does not show.
   */
  private stalled = false;
  private probing = false;

  constructor(opts: RedisBrokerOptions = {}) {
    this.prefix = opts.prefix ?? 'openalerts.rt';
    this.pubPrefix = `${this.prefix}.pub.`;
    this.ownsCmd = !opts.redis;
    const cmd = opts.redis ?? (opts.url ? new Redis(opts.url, REDIS_BROKER_TIMEOUTS) : new Redis(REDIS_BROKER_TIMEOUTS));
    cmd.defineCommand('oaPublish', { numberOfKeys: 3, lua: PUBLISH_LUA });
    cmd.defineCommand('oaHistory', { numberOfKeys: 3, lua: HISTORY_LUA });
    this.cmd = cmd as Scripted;
    this.sub = cmd.duplicate(REDIS_BROKER_TIMEOUTS);
    // Without a listener ioredis prints every connection error to stderr; reconnecting is its own.
    const warn = (err: unknown) => (opts.logger?.warn ?? opts.logger?.error)?.call(opts.logger, { err }, 'realtime: Redis broker connection error');
    if (this.ownsCmd) cmd.on('error', warn);
    this.sub.on('error', warn);
    this.sub.on('message', (rch: string, message: string) => {
      if (!this.handler || !rch.startsWith(this.pubPrefix)) return;
      const channel = rch.slice(this.pubPrefix.length);
      const i = message.indexOf(':');
      const j = message.indexOf(':', i + 1);
      if (i < 0 || j < 0) return;
      const pub: Publication = { offset: Number(message.slice(0, i)), epoch: message.slice(i + 1, j), data: message.slice(j + 1) };
      try {
        this.handler(channel, pub);
      } catch (err) {
        opts.logger?.error({ err, channel }, 'realtime: publication handler failed');
      }
    });
  }

  setHandler(handler: PublicationHandler | null): void {
    this.handler = handler;
  }

  async subscribe(channel: string): Promise<void> {
    await this.watch(this.sub.subscribe(this.pubPrefix + channel));
  }

  async unsubscribe(channel: string): Promise<void> {
    await this.watch(this.sub.unsubscribe(this.pubPrefix + channel));
  }

  async publish(channel: string, data: string, opts: PublishOptions, key?: string): Promise<StreamPosition> {
    if (opts.historySize <= 0) {
      await this.watch(this.cmd.publish(this.pubPrefix + channel, `0::${data}`));
      return { offset: 0, epoch: '' };
    }
    const [offset, epoch] = await this.watch(this.cmd.oaPublish(
      this.streamKey(channel),
      this.metaKey(channel),
      this.idemKey(channel),
      data,
      opts.historySize,
      Math.max(1, Math.ceil(opts.historyTtlMs)),
      Math.max(0, Math.ceil(opts.historyMetaTtlMs)),
      newEpoch(),
      this.pubPrefix + channel,
      key ?? '',
      IDEMPOTENCY_WINDOW,
    ));
    return { offset: Number(offset), epoch: String(epoch) };
  }

  async history(channel: string, opts: HistoryOptions = {}): Promise<HistoryResult> {
    const [offset, epoch, entries] = await this.watch(this.cmd.oaHistory(
      this.streamKey(channel),
      this.metaKey(channel),
      this.idemKey(channel),
      newEpoch(),
      Math.max(0, Math.ceil(opts.historyMetaTtlMs ?? 0)),
      opts.since?.offset ?? 0,
      opts.limit ?? -1,
    ));
    const ep = String(epoch);
    const publications: Publication[] = entries.map(([id, fields]) => ({
      offset: Number(id.slice(0, id.indexOf('-'))),
      epoch: ep,
      data: fields[1],
    }));
    return { publications, position: { offset: Number(offset), epoch: ep } };
  }

  async removeHistory(channel: string): Promise<void> {
    await this.watch(this.cmd.del(this.streamKey(channel), this.idemKey(channel)));
  }

  /**
   * Both connections ready and Redis answering (what /readyz reports). While stalled, each call
   * sends one PING on both connections (at most one probe at a time), so a Redis that answers again
   * is seen by the next call even when nothing else is sent.
   */
  connected(): boolean {
    if (this.cmd.status !== 'ready' || this.sub.status !== 'ready') return false;
    if (this.stalled && !this.probing) {
      this.probing = true;
      void Promise.all([this.watch(this.cmd.ping()), this.watch(this.sub.ping())])
        .catch(() => {})
        .finally(() => {
          this.probing = false;
        });
    }
    return !this.stalled;
  }

  /** Records whether Redis answers: a timed-out command marks it stalled, any answer clears that. */
  private watch<T>(command: Promise<T>): Promise<T> {
    return command.then(
      (value) => {
        this.stalled = false;
        return value;
      },
      (err: unknown) => {
        if (err instanceof Error && err.message === 'Command timed out') this.stalled = true;
        // A Redis error reply (a script error) is an answer too.
        else if (err instanceof Error && err.name === 'ReplyError') this.stalled = false;
        throw err;
      },
    );
  }

  async close(): Promise<void> {
    this.handler = null;
    await Promise.allSettled([closeRedis(this.sub), this.ownsCmd ? closeRedis(this.cmd) : Promise.resolve()]);
  }

  private streamKey(channel: string): string {
    return `${this.prefix}.stream.{${channel}}`;
  }

  private metaKey(channel: string): string {
    return `${this.prefix}.meta.{${channel}}`;
  }

  private idemKey(channel: string): string {
    return `${this.prefix}.idem.{${channel}}`;
  }
}
