import type { PrimaryLink } from './primary-link.js';
import type { CounterState } from './counters.js';

type Callback = (err: Error | null, result?: CounterState) => void;
interface StoreParams {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
  routeInfo?: { method?: string; url?: string };
}

/**
 * A @fastify/rate-limit store for workers of a cluster without Redis: every count goes to the
 * primary's counters (counters.ts), so the workers share one limit. A route's own limit gets its
 * own key space, as with the plugin's Redis store.
 */
export function ipcRateLimitStore(link: PrimaryLink): new (params: StoreParams) => object {
  class IpcRateLimitStore {
    readonly #continueExceeding: boolean;
    readonly #exponentialBackoff: boolean;

    constructor(
      params: StoreParams,
      readonly namespace = '',
    ) {
      this.#continueExceeding = params.continueExceeding === true;
      this.#exponentialBackoff = params.exponentialBackoff === true;
    }

    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      link.request<CounterState>('counter.incr', [this.namespace + key, timeWindow, max, this.#continueExceeding, this.#exponentialBackoff]).then(
        (state) => cb(null, state),
        (err: Error) => cb(err),
      );
    }

    read(key: string, cb: Callback, timeWindow: number): void {
      link.request<CounterState>('counter.read', [this.namespace + key, timeWindow]).then(
        (state) => cb(null, state),
        (err: Error) => cb(err),
      );
    }

    child(routeOptions: StoreParams): IpcRateLimitStore {
      return new IpcRateLimitStore(routeOptions, `${this.namespace}${routeOptions.routeInfo?.method ?? ''}${routeOptions.routeInfo?.url ?? ''}-`);
    }
  }
  return IpcRateLimitStore;
}
