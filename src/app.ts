import Fastify, { type FastifyInstance } from 'fastify';
import { apiPlugin } from './api/api.plugin.js';
import { registerOpenApi } from './api/openapi.js';
import { registerRateLimit } from './api/rate-limit.js';
import type { AppContext } from './app-context.js';
import type { WorkerRole } from './cluster/worker-role.js';
import type { Config } from './config/config.js';
import { loadSecrets, type Secrets } from './config/secrets.js';
import { createDatabase, type Database } from './db/database.js';
import { WalCheckpointer } from './db/wal-checkpointer.js';
import { migrateToLatest } from './db/migrate.js';
import { parseQueryString, registerBodyParsers } from './http/body-parsers.js';
import { clientErrorHandler } from './http/client-error.js';
import { lazySerializers } from './http/lazy-serializers.js';
import { lazyValidators } from './http/lazy-validators.js';
import { strictNumberCoercion } from './http/number-coercion.js';
import { errorHandler, jsonUnlessHtmlAsked, notFoundHandler } from './http/error-handler.js';
import { healthRoutes } from './http/health.routes.js';
import { noMetrics, type Metrics } from './metrics/metrics.js';
import { NodeRegistry } from './ops/node-registry.js';
import { registerJsonContentType } from './http/json-content-type.js';
import { proxyTrust } from './http/proxy-trust.js';
import { loggingOptions, registerRequestIdHeader } from './http/request-log.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { goalSweeper } from './modules/goals/goals.plugin.js';
import { pendingDonationSweeper } from './modules/payments/pending.sweeper.js';
import { paymentNotificationsPlugin } from './modules/payments/payments.plugin.js';
import { PaymentProviders } from './modules/payments/providers.js';
import type { StripeApiEndpoint } from './modules/payments/stripe.js';
import { outboxRelayPlugin } from './modules/outbox/outbox.plugin.js';
import { ClaimOwner, loadNodeId } from './modules/outbox/claim-owner.js';
import { OutboxRelay } from './modules/outbox/outbox.relay.js';
import { WebhookDispatcherThread } from './modules/webhooks/dispatcher-thread.js';
import { webhookDispatcherPlugin } from './modules/webhooks/webhooks.plugin.js';
import { oauthRoutes } from './oauth/oauth.routes.js';
import { RealtimeTokens } from './modules/realtime-tokens/realtime-tokens.service.js';
import { TokenStore } from './oauth/token-store.js';
import { setUpRealtime } from './realtime/setup.js';
import { Revocations } from './security/revocations.js';
import { localizedErrorPage } from './web/i18n.js';
import { assetsPlugin, pagesPlugin, widgetsPlugin } from './web/routes.js';

export interface AppOverrides {
  /** An already-open database (tests share one across app instances). Not closed by the app. */
  database?: Database;
  secrets?: Secrets;
  /** false silences request logs (tests). */
  logger?: boolean;
  /** Where the Stripe client sends API requests (tests: a loopback stand-in of the Stripe API). */
  stripeApi?: StripeApiEndpoint;
  /** A worker of `serve --workers N` (src/cluster/): shared state through the primary, no relay or dispatcher here. */
  worker?: WorkerRole;
}

/** Builds the whole service from config; server.ts listens, tests inject. Runs migrations. */
export async function buildApp(config: Readonly<Config>, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const database = overrides.database ?? createDatabase(config.database);
  const ownsDatabase = !overrides.database;
  await migrateToLatest(database.db);
  const secrets = overrides.secrets ?? loadSecrets(config);

  const app = Fastify({
    ...loggingOptions(config, overrides.logger !== false),
    bodyLimit: 1024 * 1024,
    routerOptions: { querystringParser: parseQueryString },
    // Off unless TRUST_PROXY names the proxies: request.ip is what every per-IP limit counts.
    trustProxy: proxyTrust(config),
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false }, plugins: [strictNumberCoercion] },
    // Ajv and fast-json-stringify load, and a route's validators and serializers are built, on its first use.
    schemaController: { compilersFactory: { buildValidator: lazyValidators(), buildSerializer: lazySerializers() } },
    forceCloseConnections: 'idle',
    clientErrorHandler,
    return503OnClosing: true,
  });

  // Registered first so it runs last: the database outlives everything that uses it on close.
  if (ownsDatabase) app.addHook('onClose', async () => database.close());
  // A shared database (tests) is checkpointed by whoever opened it, as SQLite does by default.
  const checkpointer = ownsDatabase && database.dialect === 'sqlite' ? new WalCheckpointer(database, app.log) : null;
  if (checkpointer) {
    app.addHook('onReady', async () => checkpointer.start());
    app.addHook('onClose', async () => checkpointer.stop());
  }
  // Every revocation (grant, application, account, widget token) goes through one hub; with Redis
  // the bus carries it to the other nodes.
  const revocations = new Revocations(app.log);
  if (config.redisUrl) {
    // Loaded only with REDIS_URL, so a server without Redis never loads ioredis.
    const { RevocationBus } = await import('./security/revocation-bus.js');
    const bus = await RevocationBus.connect(revocations, config.redisUrl, config.redisPrefix, app.log);
    app.addHook('onClose', async () => bus.close());
  } else if (overrides.worker?.shareRevocations) {
    // Workers of one server without Redis: the primary carries revocations between them.
    const stop = overrides.worker.shareRevocations(revocations);
    app.addHook('onClose', async () => stop());
  }
  const tokens = new TokenStore(database.db, { accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl }, { revocations });
  const realtimeTokens = new RealtimeTokens(database.db, secrets.realtimeTokenSecret, revocations);
  // prom-client is loaded only when metrics are asked for (METRICS_TOKEN), keeping the start lean.
  const prometheus = config.metricsToken ? new (await import('./metrics/prometheus.js')).PrometheusMetrics() : null;
  const metrics: Metrics = prometheus ?? noMetrics;
  if (prometheus) {
    const stops = [database.onQuery((seconds, failed) => prometheus.dbQuery(seconds, failed)), tokens.onCheck((valid, cached) => prometheus.tokenCheck(valid, cached))];
    app.addHook('onClose', async () => stops.forEach((stop) => stop()));
  }
  const worker = overrides.worker;
  const realtime = await setUpRealtime(app, config, database, realtimeTokens, metrics, worker?.broker ?? undefined);
  const nodes = database.dialect === 'postgres' ? new NodeRegistry(database.db, config, app.log, worker?.brokerIdentity ? { brokerIdentity: worker.brokerIdentity } : {}) : null;
  if (nodes) {
    app.addHook('onReady', async () => nodes.start());
    app.addHook('onClose', async () => nodes.stop());
  }
  // Stored events reach sockets through the real-time node's publisher (outbox → broker → hub).
  const nodeId = loadNodeId(config.dataDir);
  const relay = new OutboxRelay(database, realtime.publisher, {
    logger: app.log,
    owner: new ClaimOwner(nodeId),
    recordPositions: realtime.historyInDatabase,
    // Published events stay at least as long as the channel history they make up.
    retentionMs: Math.max(3600_000, config.historyTtl * 1000),
  });
  relay.onPublished((_event, createdAt, publishedAt) => metrics.published((publishedAt - createdAt) / 1000));
  const webhooks = new WebhookDispatcherThread(database, { config: config.webhooks, encryptionKey: secrets.encryptionKey, owner: new ClaimOwner(nodeId), logger: app.log });
  if (worker) {
    // The relay and the dispatcher run in the primary: each commit here tells it to look now.
    const stop = database.onCommit(() => worker.committed());
    app.addHook('onClose', async () => stop());
  }
  const payments = await PaymentProviders.create(config.payments, overrides.stripeApi);
  const ctx: AppContext = { config, secrets, database, db: database.db, checkpointer, tokens, realtimeTokens, revocations, realtime, relay, webhooks, metrics, nodes, payments };
  app.decorate('ctx', ctx);

  // Shared by every surface, so registered at the root: the request id header, the JSON content type (compatibility.md §1), the
  // base security headers, body parsing, the rate-limit counter store (limits nothing by itself)
  // and the OpenAPI collector (it must see the API's and the OAuth server's routes as they are
  // added). Unknown paths answer in JSON unless a browser asks for a page.
  registerRequestIdHeader(app);
  registerJsonContentType(app);
  await registerSecurityHeaders(app);
  await registerBodyParsers(app);
  await registerRateLimit(app, worker?.rateLimitStore ?? undefined);
  await registerOpenApi(app);
  app.setErrorHandler(errorHandler(jsonUnlessHtmlAsked, localizedErrorPage));
  app.setNotFoundHandler(notFoundHandler(jsonUnlessHtmlAsked, localizedErrorPage));

  if (prometheus) {
    const { metricsRoutes, registerRequestMetrics } = await import('./metrics/metrics.plugin.js');
    registerRequestMetrics(app, prometheus);
    await app.register(metricsRoutes(prometheus, config.metricsToken!));
  }

  // One plugin per surface; each registers the hooks, error shape and session handling of its own routes.
  await app.register(healthRoutes);
  await app.register(apiPlugin);
  await app.register(oauthRoutes);
  await app.register(pagesPlugin);
  await app.register(paymentNotificationsPlugin);
  await app.register(widgetsPlugin);
  await app.register(assetsPlugin);
  await app.register(goalSweeper);
  await app.register(pendingDonationSweeper);
  if (!worker) {
    // Once per server: a worker's primary runs them (src/cluster/primary.ts).
    await app.register(outboxRelayPlugin);
    await app.register(webhookDispatcherPlugin);
  }
  return app;
}
