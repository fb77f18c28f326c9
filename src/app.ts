import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerApi } from './api/api.plugin.js';
import type { AppContext } from './app-context.js';
import type { Config } from './config/config.js';
import { loadSecrets, type Secrets } from './config/secrets.js';
import { createDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { registerErrorHandler } from './http/error-handler.js';
import { healthRoutes } from './http/health.routes.js';
import { registerJsonContentType } from './http/json-content-type.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { goalsAndPolls } from './modules/goals/goals.plugin.js';
import { oauthRoutes } from './oauth/oauth.routes.js';
import { TokenStore } from './oauth/token-store.js';
import { setUpRealtime } from './realtime/setup.js';
import { errorPage } from './web/layout.js';
import { webRoutes } from './web/routes.js';
import { registerSessions } from './web/session.js';

export interface AppOverrides {
  /** An already-open database (tests share one across app instances). Not closed by the app. */
  database?: Database;
  secrets?: Secrets;
  /** false silences request logs (tests). */
  logger?: boolean;
}

/** Builds the whole service from config; server.ts listens, tests inject. Runs migrations. */
export async function buildApp(config: Readonly<Config>, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const database = overrides.database ?? createDatabase(config.database);
  const ownsDatabase = !overrides.database;
  await migrateToLatest(database.db);
  const secrets = overrides.secrets ?? loadSecrets(config);

  const app = Fastify({
    logger:
      overrides.logger === false
        ? false
        : { level: config.logLevel, ...(config.prettyLogs ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } } } : {}) },
    bodyLimit: 1024 * 1024,
    trustProxy: true,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  const tokens = new TokenStore(database.db, { accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl });
  // Registered first so it runs last: the database outlives everything that uses it on close.
  if (ownsDatabase) app.addHook('onClose', async () => database.close());
  const realtime = await setUpRealtime(app, config, database, tokens, secrets.realtimeTokenSecret);
  const ctx: AppContext = { config, secrets, database, db: database.db, tokens, realtime };
  app.decorate('ctx', ctx);

  registerErrorHandler(app, errorPage);
  registerJsonContentType(app);
  await registerSecurityHeaders(app);
  await registerBodyParsers(app);
  await app.register(cookie, { secret: secrets.cookieSecret });
  await app.register(csrf, {
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', signed: true, secure: config.publicUrl.startsWith('https:') },
  });
  // Rate limit (off by default; routes opt in with `config.rateLimit`), CORS, OpenAPI, /api/v1.
  await registerApi(app);
  registerSessions(app);
  app.decorateRequest('auth', null);

  await app.register(healthRoutes);
  await app.register(webRoutes);
  await app.register(oauthRoutes);
  await app.register(goalsAndPolls);
  return app;
}
