import type { Kysely } from 'kysely';
import type { Config } from './config/config.js';
import type { Secrets } from './config/secrets.js';
import type { Database } from './db/database.js';
import type { WalCheckpointer } from './db/wal-checkpointer.js';
import type { DB } from './db/schema.js';
import type { Metrics } from './metrics/metrics.js';
import type { NodeRegistry } from './ops/node-registry.js';
import type { UserRow } from './modules/accounts/accounts.table.js';
import type { PaymentProviders } from './modules/payments/providers.js';
import type { OutboxRelay } from './modules/outbox/outbox.relay.js';
import type { WebhookDispatcherThread } from './modules/webhooks/dispatcher-thread.js';
import type { RealtimeTokens } from './modules/realtime-tokens/realtime-tokens.service.js';
import type { TokenStore } from './oauth/token-store.js';
import type { Realtime } from './realtime/setup.js';
import type { Revocations } from './security/revocations.js';

/** What every route and service needs from the running app; built once in buildApp. */
export interface AppContext {
  config: Readonly<Config>;
  secrets: Secrets;
  database: Database;
  db: Kysely<DB>;
  /** SQLite file the app opened itself: WAL checkpoints from a thread, off the requests' event loop; else null. */
  checkpointer: WalCheckpointer | null;
  /** OAuth tokens: issue, verify (cached), revoke. */
  tokens: TokenStore;
  /** Real-time (WebSocket) tokens: issue for apps, dashboard and widgets; check at connect and subscribe. */
  realtimeTokens: RealtimeTokens;
  /** Announce what is revoked (after commit): caches and live sockets forget it on every node. */
  revocations: Revocations;
  /** WebSocket node, its broker and the publisher stored events go out through. */
  realtime: Realtime;
  /** Publishes the outbox; `onPublished` reports each event's commit → broker latency. */
  relay: OutboxRelay;
  /** Delivers outbox events to webhook subscriptions (modules/webhooks). */
  webhooks: WebhookDispatcherThread;
  /** Counters and timings for GET /metrics; a no-op while METRICS_TOKEN is unset. */
  metrics: Metrics;
  /** PostgreSQL: the nodes sharing the database (heartbeats); null on SQLite, where one server holds the file. */
  nodes: NodeRegistry | null;
  /** The payment providers this instance runs (PAYMENT_PROVIDERS, SANDBOX) and the Stripe client. */
  payments: PaymentProviders;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    /** The logged-in streamer on page routes (set by the session hook), else null. */
    sessionUser: UserRow | null;
  }
}
