import type { Broker, HistoryOptions, PublishOptions } from '../realtime/broker.js';
import type { Metrics } from './metrics.js';

/**
 * The broker with failed calls counted, by operation. A decorator rather than counting inside each
 * broker, so the memory and Redis brokers (and their shared contract) stay as they are.
 */
export function observedBroker(broker: Broker, metrics: Metrics): Broker {
  if (!metrics.enabled) return broker;
  const counted = <T>(operation: string, call: Promise<T>): Promise<T> =>
    call.catch((err: unknown) => {
      metrics.brokerError(operation);
      throw err;
    });
  return {
    setHandler: (handler) => broker.setHandler(handler),
    subscribe: (channel: string) => counted('subscribe', broker.subscribe(channel)),
    unsubscribe: (channel: string) => counted('unsubscribe', broker.unsubscribe(channel)),
    publish: (channel: string, data: string, opts: PublishOptions, key?: string) => counted('publish', broker.publish(channel, data, opts, key)),
    history: (channel: string, opts?: HistoryOptions) => counted('history', broker.history(channel, opts)),
    removeHistory: (channel: string) => broker.removeHistory(channel),
    close: () => broker.close(),
    connected: () => broker.connected(),
  };
}
