import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Metrics, MetricSources } from './metrics.js';

/** Every name the service exports besides prom-client's process_* and nodejs_* metrics (docs/operations.md lists them). */
export const METRIC_NAMES = {
  httpDuration: 'openalerts_http_request_duration_seconds',
  tokenChecks: 'openalerts_oauth_token_checks_total',
  tokenCacheHits: 'openalerts_oauth_token_cache_hits_total',
  rateLimited: 'openalerts_rate_limit_rejections_total',
  outboxBacklog: 'openalerts_outbox_backlog',
  outboxOldestAge: 'openalerts_outbox_oldest_unpublished_age_seconds',
  publishLatency: 'openalerts_outbox_publish_latency_seconds',
  sockets: 'openalerts_realtime_sockets',
  subscriptions: 'openalerts_realtime_subscriptions',
  recoveries: 'openalerts_realtime_recoveries_total',
  brokerErrors: 'openalerts_broker_errors_total',
  dbQuery: 'openalerts_db_query_duration_seconds',
} as const;

// Seconds. HTTP and SQL: from well under a millisecond (cached reads, SQLite) to seconds (a stall).
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Commit → broker includes the relay's idle poll (100 ms) for rows written by another process.
const PUBLISH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The Prometheus side of `Metrics`: one registry per app (tests build several apps in one process),
 * counters and histograms updated as things happen, gauges read from `MetricSources` when scraped.
 */
export class PrometheusMetrics implements Metrics {
  readonly enabled = true;
  readonly registry = new Registry();
  #sources: MetricSources | null = null;
  readonly #http: Histogram<'method' | 'route' | 'status_code'>;
  readonly #tokenChecks: Counter<'result'>;
  readonly #tokenCacheHits: Counter;
  readonly #rateLimited: Counter<'route'>;
  readonly #publishLatency: Histogram;
  readonly #recoveries: Counter<'outcome'>;
  readonly #brokerErrors: Counter<'operation'>;
  readonly #dbQuery: Histogram<'outcome'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#http = new Histogram({
      name: METRIC_NAMES.httpDuration,
      help: 'HTTP requests by route template, method and status code: time from arrival to the response sent.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#tokenChecks = new Counter({ name: METRIC_NAMES.tokenChecks, help: 'OAuth bearer-token checks by result (valid, invalid).', labelNames: ['result'], registers });
    this.#tokenCacheHits = new Counter({ name: METRIC_NAMES.tokenCacheHits, help: 'Valid bearer-token checks answered from the verified-token cache (no database read).', registers });
    this.#rateLimited = new Counter({ name: METRIC_NAMES.rateLimited, help: 'Requests refused with 429 by a rate limit, by route template.', labelNames: ['route'], registers });
    this.#publishLatency = new Histogram({
      name: METRIC_NAMES.publishLatency,
      help: 'Outbox publications: time from the row being written (in the committing transaction) to the broker accepting it.',
      buckets: PUBLISH_BUCKETS,
      registers,
    });
    this.#recoveries = new Counter({ name: METRIC_NAMES.recoveries, help: 'Real-time subscriptions that asked to recover missed publications, by outcome (recovered, not_recovered).', labelNames: ['outcome'], registers });
    this.#brokerErrors = new Counter({ name: METRIC_NAMES.brokerErrors, help: 'Failed broker calls by operation (publish, subscribe, unsubscribe, history).', labelNames: ['operation'], registers });
    this.#dbQuery = new Histogram({ name: METRIC_NAMES.dbQuery, help: 'SQL statements by outcome (ok, error): execution time.', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registers });

    // Known label values start at 0, so a rate() over them works from the first scrape.
    for (const result of ['valid', 'invalid']) this.#tokenChecks.inc({ result }, 0);
    for (const outcome of ['recovered', 'not_recovered']) this.#recoveries.inc({ outcome }, 0);
    for (const operation of ['publish', 'subscribe', 'unsubscribe', 'history']) this.#brokerErrors.inc({ operation }, 0);
    for (const outcome of ['ok', 'error']) this.#dbQuery.zero({ outcome });

    const sources = () => this.#sources;
    // Both outbox gauges come from one query: the backlog gauge (collected first) runs it, the age
    // gauge reuses its answer.
    let outbox: ReturnType<MetricSources['outbox']> | null = null;
    new Gauge({
      name: METRIC_NAMES.outboxBacklog,
      help: 'Outbox rows written but not yet published.',
      registers,
      async collect() {
        outbox = sources()?.outbox() ?? null;
        const value = await outbox;
        if (value) this.set(value.backlog);
      },
    });
    new Gauge({
      name: METRIC_NAMES.outboxOldestAge,
      help: 'Age of the oldest unpublished outbox row (0 when none): a growing value means events are stuck.',
      registers,
      async collect() {
        const value = await (outbox ?? sources()?.outbox());
        outbox = null;
        if (value) this.set(value.oldestCreatedAt === null ? 0 : Math.max(0, (Date.now() - value.oldestCreatedAt) / 1000));
      },
    });
    new Gauge({
      name: METRIC_NAMES.sockets,
      help: 'Open real-time WebSocket connections by protocol (legacy = centrifuge-js 2.x, v2 = centrifuge-js 3 and later, undetected = no frame yet).',
      labelNames: ['protocol'],
      registers,
      collect() {
        const counts = sources()?.sockets();
        if (!counts) return;
        for (const [protocol, count] of Object.entries(counts)) this.set({ protocol }, count);
      },
    });
    new Gauge({
      name: METRIC_NAMES.subscriptions,
      help: 'Channel subscriptions of the real-time clients connected to this node.',
      registers,
      collect() {
        const value = sources()?.subscriptions();
        if (value !== undefined) this.set(value);
      },
    });
  }

  /** Where the scrape-time gauges read from; set once the app is built. */
  setSources(sources: MetricSources): void {
    this.#sources = sources;
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.#http.observe({ method, route, status_code: String(statusCode) }, seconds);
  }

  tokenCheck(valid: boolean, cached: boolean): void {
    this.#tokenChecks.inc({ result: valid ? 'valid' : 'invalid' });
    if (cached) this.#tokenCacheHits.inc();
  }

  rateLimitRejected(route: string): void {
    this.#rateLimited.inc({ route });
  }

  published(seconds: number): void {
    this.#publishLatency.observe(Math.max(0, seconds));
  }

  brokerError(operation: string): void {
    this.#brokerErrors.inc({ operation });
  }

  recovery(recovered: boolean): void {
    this.#recoveries.inc({ outcome: recovered ? 'recovered' : 'not_recovered' });
  }

  dbQuery(seconds: number, failed: boolean): void {
    this.#dbQuery.observe({ outcome: failed ? 'error' : 'ok' }, seconds);
  }
}
