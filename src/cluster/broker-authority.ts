import type { HistoryOptions, PublishOptions } from '../realtime/broker.js';
import type { MemoryBroker } from '../realtime/broker-memory.js';
import type { PublicationTuple, ToWorker } from './messages.js';

/**
 * The primary's side of the workers' IpcBroker (src/realtime/broker-ipc.ts): the cluster's one
 * in-memory broker, so offsets, epochs and history stay one per channel whichever worker asks,
 * and the outbox relay (also in the primary) publishes into it. A publication goes to each worker
 * that has subscribers on its channel, once; the worker's hub fans it out to its sockets.
 *
 * Publications travel in batches: one IPC message per worker carries every publication since the
 * last (`flush`: the relay calls it at the end of each round, or the next turn of the event loop
 * does). A message costs a stringify, a pipe write and, in the worker, a read, a parse and an
 * event, whatever it carries; one per publication made the IPC hop a publication's largest cost
 * in the primary when a channel has few subscribers.
 */
export class BrokerAuthority {
  readonly #subscribers = new Map<string, Set<number>>();
  /** Per worker, the publications not yet sent to it, in the order the broker assigned them. */
  readonly #unsent = new Map<number, PublicationTuple[]>();
  #flushScheduled = false;

  constructor(
    readonly broker: MemoryBroker,
    private readonly send: (workerId: number, message: ToWorker) => void,
  ) {
    broker.setHandler((channel, pub) => {
      const workers = this.#subscribers.get(channel);
      if (!workers) return;
      for (const worker of workers) {
        let unsent = this.#unsent.get(worker);
        if (!unsent) this.#unsent.set(worker, (unsent = []));
        unsent.push([channel, pub.offset, pub.epoch, pub.data]);
      }
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Sends each worker the publications it has not been sent yet, in one message. */
  readonly flush = (): void => {
    this.#flushScheduled = false;
    for (const worker of [...this.#unsent.keys()]) this.#flushTo(worker);
  };

  #flushTo(workerId: number): void {
    const pubs = this.#unsent.get(workerId);
    if (!pubs) return;
    this.#unsent.delete(workerId);
    this.send(workerId, { oa: 'pubs', pubs });
  }

  async handle(workerId: number, op: string, args: unknown[]): Promise<unknown> {
    const value = await this.#operation(workerId, op, args);
    // Whatever the broker assigned before this answer reaches the worker before it, as when each
    // publication was sent at once (the worker's subscribe and history reads rely on positions,
    // not on this order, but nothing arrives later than it used to).
    this.#flushTo(workerId);
    return value;
  }

  async #operation(workerId: number, op: string, args: unknown[]): Promise<unknown> {
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
    this.#unsent.delete(workerId);
    for (const channel of [...this.#subscribers.keys()]) await this.#drop(channel, workerId);
  }

  async #drop(channel: string, workerId: number): Promise<void> {
    const workers = this.#subscribers.get(channel);
    if (!workers?.delete(workerId) || workers.size > 0) return;
    this.#subscribers.delete(channel);
    await this.broker.unsubscribe(channel);
  }
}
