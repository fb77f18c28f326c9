import type { HistoryOptions, PublishOptions } from '../realtime/broker.js';
import type { MemoryBroker } from '../realtime/broker-memory.js';
import type { ToWorker } from './messages.js';

/**
 * The primary's side of the workers' IpcBroker (src/realtime/broker-ipc.ts): the cluster's one
 * in-memory broker, so offsets, epochs and history stay one per channel whichever worker asks,
 * and the outbox relay (also in the primary) publishes into it. A publication goes to each worker
 * that has subscribers on its channel, once; the worker's hub fans it out to its sockets.
 */
export class BrokerAuthority {
  readonly #subscribers = new Map<string, Set<number>>();

  constructor(
    readonly broker: MemoryBroker,
    private readonly send: (workerId: number, message: ToWorker) => void,
  ) {
    broker.setHandler((channel, pub) => {
      const workers = this.#subscribers.get(channel);
      if (!workers) return;
      for (const worker of workers) this.send(worker, { oa: 'pub', channel, pub });
    });
  }

  async handle(workerId: number, op: string, args: unknown[]): Promise<unknown> {
    const channel = String(args[0]);
    switch (op) {
      case 'broker.subscribe': {
        let workers = this.#subscribers.get(channel);
        if (!workers) {
          this.#subscribers.set(channel, (workers = new Set()));
          await this.broker.subscribe(channel);
        }
        workers.add(workerId);
        return null;
      }
      case 'broker.unsubscribe':
        await this.#drop(channel, workerId);
        return null;
      case 'broker.publish':
        return this.broker.publish(channel, String(args[1]), args[2] as PublishOptions, args[3] === undefined ? undefined : String(args[3]));
      case 'broker.history':
        return this.broker.history(channel, (args[1] ?? {}) as HistoryOptions);
      case 'broker.removeHistory':
        await this.broker.removeHistory(channel);
        return null;
      default:
        throw new Error(`unknown broker operation ${op}`);
    }
  }

  /** A worker exited: it has no subscribers any more (its clients reconnect to another worker). */
  async workerGone(workerId: number): Promise<void> {
    for (const channel of [...this.#subscribers.keys()]) await this.#drop(channel, workerId);
  }

  async #drop(channel: string, workerId: number): Promise<void> {
    const workers = this.#subscribers.get(channel);
    if (!workers?.delete(workerId) || workers.size > 0) return;
    this.#subscribers.delete(channel);
    await this.broker.unsubscribe(channel);
  }
}
