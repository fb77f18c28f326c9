/** Raw environment, read in one place so nothing else touches process.env. */
export interface RawEnv {
  PORT?: string;
  HOST?: string;
  PUBLIC_URL?: string;
  DATA_DIR?: string;
  DATABASE_URL?: string;
  DATABASE_STATEMENT_TIMEOUT_MS?: string;
  REDIS_URL?: string;
  REDIS_PREFIX?: string;
  LOG_LEVEL?: string;
  SECRET_KEY?: string;
  REALTIME_TOKEN_SECRET?: string;
  ACCESS_TOKEN_TTL?: string;
  REFRESH_TOKEN_TTL?: string;
  RATE_LIMIT_PER_MINUTE?: string;
  HISTORY_SIZE?: string;
  HISTORY_TTL?: string;
  TRUST_PROXY?: string;
  PKCE_ALLOW_PLAIN?: string;
  NODE_ENV?: string;
  METRICS_TOKEN?: string;
  WEBHOOKS_ALLOW_HTTP?: string;
  WEBHOOKS_TIMEOUT_MS?: string;
  WEBHOOKS_RETRY_WINDOW?: string;
  WEBHOOKS_RETRY_BASE_MS?: string;
  WEBHOOKS_SECRET_OVERLAP?: string;
  WEBHOOKS_LOG_RETENTION?: string;
  WEBHOOKS_THREAD_NICE?: string;
  MEDIA_MAX_BYTES?: string;
  SANDBOX?: string;
  PAYMENT_PROVIDERS?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
}

export const ENV_KEYS = [
  'PORT', 'HOST', 'PUBLIC_URL', 'DATA_DIR', 'DATABASE_URL', 'DATABASE_STATEMENT_TIMEOUT_MS', 'REDIS_URL', 'REDIS_PREFIX', 'LOG_LEVEL', 'SECRET_KEY',
  'REALTIME_TOKEN_SECRET', 'ACCESS_TOKEN_TTL', 'REFRESH_TOKEN_TTL', 'RATE_LIMIT_PER_MINUTE',
  'HISTORY_SIZE', 'HISTORY_TTL', 'TRUST_PROXY', 'PKCE_ALLOW_PLAIN', 'NODE_ENV', 'METRICS_TOKEN',
  'WEBHOOKS_ALLOW_HTTP', 'WEBHOOKS_TIMEOUT_MS', 'WEBHOOKS_RETRY_WINDOW', 'WEBHOOKS_RETRY_BASE_MS', 'WEBHOOKS_SECRET_OVERLAP', 'WEBHOOKS_LOG_RETENTION', 'WEBHOOKS_THREAD_NICE',
  'MEDIA_MAX_BYTES',
  'SANDBOX', 'PAYMENT_PROVIDERS', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET',
] as const satisfies readonly (keyof RawEnv)[];

export function readEnv(source: NodeJS.ProcessEnv = process.env): RawEnv {
  const env: RawEnv = {};
  for (const key of ENV_KEYS) {
    const value = source[key];
    if (value !== undefined && value !== '') env[key] = value;
  }
  return env;
}
