import { Redis } from 'ioredis';
import { closeRedis } from '../db/redis.js';
import type { Revocation, TokenStore } from './token-store.js';

type Logger = { warn(obj: object, msg?: string): void };

/**
 * Carries token revocations between nodes over Redis pub/sub, so a token revoked on one node stops
 * working on every node within a second (issue 5): each node evicts it from its verify cache.
 * Without Redis there is one node and nothing to carry.
 */
export class RevocationBus {
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #channel: string;
  readonly #origin = Math.random().toString(36).slice(2);
  readonly #detach: () => void;

  private constructor(tokens: TokenStore, url: string, prefix: string, logger?: Logger) {
    this.#channel = `${prefix}.oauth.revocations`;
    this.#pub = new Redis(url, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
    this.#sub = this.#pub.duplicate();
    for (const client of [this.#pub, this.#sub]) client.on('error', (err) => logger?.warn({ err }, 'revocation bus: Redis error'));
    this.#sub.on('message', (_channel: string, message: string) => {
      try {
        const { origin, revocation } = JSON.parse(message) as { origin: string; revocation: Revocation };
        if (origin !== this.#origin) tokens.forget(revocation, false);
      } catch {
        // not ours
      }
    });
    this.#detach = tokens.onRevoke((revocation) => {
      this.#pub.publish(this.#channel, JSON.stringify({ origin: this.#origin, revocation })).catch((err) => logger?.warn({ err }, 'revocation bus: publish failed'));
    });
  }

  static async connect(tokens: TokenStore, url: string, prefix: string, logger?: Logger): Promise<RevocationBus> {
    const bus = new RevocationBus(tokens, url, prefix, logger);
    await bus.#sub.subscribe(bus.#channel);
    return bus;
  }

  async close(): Promise<void> {
    this.#detach();
    this.#sub.disconnect();
    await closeRedis(this.#pub);
  }
}
