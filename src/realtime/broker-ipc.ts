import type { PrimaryLink } from '../cluster/primary-link.js';
import type { Broker, HistoryOptions, HistoryResult, PublicationHandler, PublishOptions, StreamPosition } from './broker.js';

/**
 * A worker's broker under `serve --workers N` without Redis (src/cluster/): the primary process
 * holds the one in-memory broker of the cluster (offsets, epochs, history, the outbox-saved
 * streams), so every channel has one stream whichever worker its subscribers are on; this broker
 * asks it over IPC. The primary sends each publication to every worker subscribed to its channel
 * (batched: one message carries every publication of a relay round), and each worker fans it out
 * to its own sockets — fan-out runs on every core.
 *
 * IPC is ordered: a subscribe is answered after the primary registered it, so every publication the
 * primary assigns after that reaches this worker (a history read after it may repeat one the
 * subscription then delivers: the hub skips what is at or before the position it sent).
 */
export class IpcBroker implements Broker {
  #handler: PublicationHandler | null = null;
  readonly #stop: () => void;

  constructor(private readonly link: PrimaryLink) {
    this.#stop = link.on('pubs', (m) => {
      for (const [channel, offset, epoch, data] of m.pubs) this.#handler?.(channel, { offset, epoch, data });
    });
  }

  setHandler(handler: PublicationHandler | null): void {
    this.#handler = handler;
  }

  subscribe(channel: string): Promise<void> {
    return this.link.request('broker.subscribe', [channel]);
  }

  unsubscribe(channel: string): Promise<void> {
    return this.link.request('broker.unsubscribe', [channel]);
  }

  publish(channel: string, data: string, opts: PublishOptions, key?: string): Promise<StreamPosition> {
    return this.link.request('broker.publish', key === undefined ? [channel, data, opts] : [channel, data, opts, key]);
  }

  history(channel: string, opts: HistoryOptions = {}): Promise<HistoryResult> {
    return this.link.request('broker.history', [channel, opts]);
  }

  removeHistory(channel: string): Promise<void> {
    return this.link.request('broker.removeHistory', [channel]);
  }

  connected(): boolean {
    return this.link.connected;
  }

  async close(): Promise<void> {
    this.#handler = null;
    this.#stop();
  }
}
