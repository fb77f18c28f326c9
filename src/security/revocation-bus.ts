import { Redis } from 'ioredis';
import { closeRedis } from '../db/redis.js';
import { isRevocation, type Revocations } from './revocations.js';

type Logger = { warn(obj: object, msg?: string): void };

/**
 * Carries revocations between nodes over Redis pub/sub, so something revoked on one node stops
 * working on every node within a second: each node evicts it from its caches and disconnects the
 * sockets that used it. Without Redis there is one node and nothing to carry.
 */
export class RevocationBus {
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #channel: string;
  readonly #origin = Math.random().toString(36).slice(2);
  readonly #detach: () => void;

  private constructor(revocations: Revocations, url: string, prefix: string, logger?: Logger) {
    this.#channel = `${prefix}.oauth.revocations`;
    this.#pub = new Redis(url, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
    this.#sub = this.#pub.duplicate();
    for (const client of [this.#pub, this.#sub]) client.on('error', (err) => logger?.warn({ err }, 'revocation bus: Redis error'));
    this.#sub.on('message', (_channel: string, message: string) => {
      let parsed: { origin?: unknown; revocation?: unknown };
      try {
        parsed = JSON.parse(message) as typeof parsed;
      } catch {
        return; // not ours
      }
      if (parsed?.origin !== this.#origin && isRevocation(parsed?.revocation)) revocations.receive(parsed.revocation);
    });
    this.#detach = revocations.onAnnounce((revocation) => {
      this.#pub.publish(this.#channel, JSON.stringify({ origin: this.#origin, revocation })).catch((err) => logger?.warn({ err }, 'revocation bus: publish failed'));
    });
  }

  static async connect(revocations: Revocations, url: string, prefix: string, logger?: Logger): Promise<RevocationBus> {
    const bus = new RevocationBus(revocations, url, prefix, logger);
    await bus.#sub.subscribe(bus.#channel);
    return bus;
  }

  async close(): Promise<void> {
    this.#detach();
    this.#sub.disconnect();
    await closeRedis(this.#pub);
  }
}
