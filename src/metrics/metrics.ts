/**
 * What the running service reports to its metrics, as calls made at the seams of the code (the
 * HTTP hook, the token store, the rate limit, the outbox relay's publish, the real-time node, the
 * database). Code that records depends on this interface only: with METRICS_TOKEN unset every call
 * is a no-op and prom-client is never loaded (prometheus.ts is imported on demand).
 */
export interface Metrics {
  readonly enabled: boolean;
  /** One finished HTTP request; `route` is the route template (`/api/v1/alerts/donations`), never the raw URL. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** One bearer-token check: valid or not, answered from the verified-token cache or the database. */
  tokenCheck(valid: boolean, cached: boolean): void;
  /** A request refused with 429 by a rate limit. */
  rateLimitRejected(route: string): void;
  /** An outbox row reached the broker `seconds` after it was written (commit → broker). */
  published(seconds: number): void;
  /** A broker call failed (`operation`: publish, subscribe, unsubscribe, history). */
  brokerError(operation: string): void;
  /** A real-time client asked to recover missed publications; `recovered` when history had them all. */
  recovery(recovered: boolean): void;
  /** One SQL statement, how long it took, and whether it failed. */
  dbQuery(seconds: number, failed: boolean): void;
}

/** Values read when Prometheus scrapes, not counted as they happen. */
export interface MetricSources {
  outbox(): Promise<{ backlog: number; oldestCreatedAt: number | null }>;
  sockets(): Record<'legacy' | 'v2' | 'undetected', number>;
  subscriptions(): number;
}

const noop = (): void => {};

export const noMetrics: Metrics = {
  enabled: false,
  httpRequest: noop,
  tokenCheck: noop,
  rateLimitRejected: noop,
  published: noop,
  brokerError: noop,
  recovery: noop,
  dbQuery: noop,
};
