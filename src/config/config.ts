import { isIP } from 'node:net';
import path from 'node:path';
import { isStreamerProvider, STREAMER_PROVIDERS, type StreamerProviderId } from '../domain/payment-providers.js';
import type { RawEnv } from './env.js';

export type DatabaseConfig =
  | { dialect: 'sqlite'; file: string }
  | {
      dialect: 'postgres';
      url: string;
      schema?: string;
      /**
       * A statement running longer is cancelled by PostgreSQL and its request fails with 503 +
       * Retry-After (a lock held elsewhere, an overloaded server) instead of hanging; 0: no limit.
       */
      statementTimeoutMs?: number;
    };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /** Base for absolute links, without a trailing slash. */
  publicUrl: string;
  dataDir: string;
  database: DatabaseConfig;
  redisUrl: string | null;
  /** Namespaces every Redis key and pub/sub channel, so deployments can share one Redis. */
  redisPrefix: string;
  logLevel: LogLevel;
  /** Seconds. Existing clients expect long-lived access tokens: a year by default. */
  accessTokenTtl: number;
  refreshTokenTtl: number;
  rateLimitPerMinute: number;
  /** Real-time history per channel: how many publications, kept how many seconds. */
  historySize: number;
  historyTtl: number;
  /** Secrets given in the environment; absent ones are generated and persisted (see secrets.ts). */
  secretKey: string | null;
  realtimeTokenSecret: string | null;
  prettyLogs: boolean;
  /** Bearer token that reads GET /metrics; null: no /metrics (404) and no metrics collected. */
  metricsToken: string | null;
  /**
   * Which peers may tell us the client's address (X-Forwarded-For, X-Forwarded-Proto, …), in the
   * form Fastify's `trustProxy` takes: false (nobody: the socket's peer is the client), a hop count,
   * or addresses / CIDR ranges / proxy-addr names (`loopback`, `linklocal`, `uniquelocal`).
   */
  trustProxy: false | number | string[];
  /** RFC 9700 §2.1.1: PKCE `plain` is refused unless an operator allows it for old clients. */
  pkceAllowPlain: boolean;
  /** Largest alert image, video or sound a streamer may upload, bytes (kept in the database). */
  mediaMaxBytes: number;
  webhooks: WebhooksConfig;
  payments: PaymentsConfig;
}

/** Webhook delivery (modules/webhooks; README "Webhooks"). Times in milliseconds. */
export interface WebhooksConfig {
  /** WEBHOOKS_ALLOW_HTTP: loopback endpoints allowed, plain http:// to them too (development, tests). */
  allowHttp: boolean;
  /** One attempt's limit: connect, send, answer. */
  timeoutMs: number;
  /** A delivery is retried this long, then its subscription is disabled. */
  retryWindowMs: number;
  /** The first retry's delay; each next one doubles (with jitter), up to an hour. */
  retryBaseMs: number;
  /** After a secret rotation the old secret still signs (a second signature) this long. */
  secretOverlapMs: number;
  /** WEBHOOKS_LOG_RETENTION (days): finished deliveries and their attempts are pruned after this. */
  logRetentionMs: number;
  /**
   * WEBHOOKS_THREAD_NICE: the dispatcher thread's CPU priority on Linux (dispatcher.worker.ts).
   * `idle` (the default): the scheduler's idle class, a CPU nothing else wants; a number: that much
   * nice added to the process's; 0 leaves it as the requests' thread.
   */
  threadNice: number | 'idle';
}

export interface PaymentsConfig {
  /**
   * The built-in test provider (records donations as paid, takes no money): on by default only
   * while PUBLIC_URL is a loopback address, so a public instance never takes free donations
   * unless its operator says so (SANDBOX=1).
   */
  sandbox: boolean;
  /** Providers streamers may turn on in their dashboard (PAYMENT_PROVIDERS). */
  enabled: readonly StreamerProviderId[];
  /** The instance's Stripe account; set exactly when `stripe` is enabled. */
  stripe: { secretKey: string; webhookSecret: string } | null;
}

/** A configuration error names the variable and says what is allowed. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid ${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: RawEnv, key: keyof RawEnv, fallback: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(key, `"${raw}" is not a whole number; use ${min}–${max}.`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(key, `${value} is out of range; use ${min}–${max}.`);
  return value;
}

function dispatcherThreadNice(env: RawEnv): number | 'idle' {
  const raw = env.WEBHOOKS_THREAD_NICE;
  if (raw === undefined || raw === 'idle') return 'idle';
  if (!/^\d+$/.test(raw) || Number(raw) > 19) throw new ConfigError('WEBHOOKS_THREAD_NICE', `"${raw}" is neither idle nor a nice value; use idle (the default), or 0–19 (0: the same priority as requests).`);
  return Number(raw);
}

function databaseConfig(env: RawEnv, dataDir: string): DatabaseConfig {
  const url = env.DATABASE_URL;
  if (url === undefined) return { dialect: 'sqlite', file: path.join(dataDir, 'openalerts.sqlite') };
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid URL; use postgres://user:password@host:5432/database.');
    }
    return { dialect: 'postgres', url, statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 10_000, 0, 3_600_000) };
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!file) throw new ConfigError('DATABASE_URL', 'names no file; use sqlite:/path/to/file.sqlite.');
    return { dialect: 'sqlite', file: path.resolve(file) };
  }
  throw new ConfigError('DATABASE_URL', 'must start with postgres:// (or sqlite:<file>); leave it unset for SQLite under DATA_DIR.');
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An IP address, or a CIDR range with a prefix that fits its family. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY. Off by default: X-Forwarded-For is then ignored, so no client can pick the address
 * that rate limits count. `true` (trust any peer) is refused because it is exactly that hole; a
 * deployment behind a proxy with unknown addresses trusts one hop instead.
 */
function trustProxy(raw: string | undefined): false | number | string[] {
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  const usage = 'use a hop count (1 = the proxy in front of us), or a comma-separated list of proxy addresses, CIDR ranges and loopback, linklocal, uniquelocal; leave it unset when clients connect directly.';
  if (value === 'false' || value === '0') return false;
  if (value === 'true') throw new ConfigError('TRUST_PROXY', `"true" would let any client forge its address; ${usage}`);
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigError('TRUST_PROXY', `${hops} hops is more than any real chain of proxies; ${usage}`);
    return hops;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (!PROXY_NAMES.includes(entry) && !isAddressOrRange(entry)) {
      throw new ConfigError('TRUST_PROXY', `"${entry}" is not an IP address, a CIDR range or one of ${PROXY_NAMES.join(', ')}; ${usage}`);
    }
  }
  return entries;
}

function flag(env: RawEnv, key: keyof RawEnv, fallback = false): boolean {
  const raw = env[key]?.trim().toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(key, `"${env[key]}" is not a flag; use true or false.`);
}

/** localhost, *.localhost, 127.0.0.0/8 and ::1: a URL only this machine can reach. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function paymentsConfig(env: RawEnv, publicUrl: string): PaymentsConfig {
  const usage = `use a comma-separated list of ${STREAMER_PROVIDERS.join(', ')}, or leave it unset for none.`;
  const enabled: StreamerProviderId[] = [];
  for (const entry of (env.PAYMENT_PROVIDERS ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean)) {
    if (!isStreamerProvider(entry)) throw new ConfigError('PAYMENT_PROVIDERS', `"${entry}" is not a payment provider; ${usage}`);
    if (!enabled.includes(entry)) enabled.push(entry);
  }
  let stripe: PaymentsConfig['stripe'] = null;
  if (enabled.includes('stripe')) {
    const secretKey = env.STRIPE_SECRET_KEY;
    const webhookSecret = env.STRIPE_WEBHOOK_SECRET;
    if (!secretKey || !/^(sk|rk)_(test|live)_\w+$/.test(secretKey)) {
      throw new ConfigError('STRIPE_SECRET_KEY', 'Stripe is in PAYMENT_PROVIDERS; set the secret key of the instance\'s Stripe account (sk_live_… or sk_test_…, or a restricted rk_… key).');
    }
    if (!webhookSecret || !/^whsec_\w+$/.test(webhookSecret)) {
      throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'Stripe is in PAYMENT_PROVIDERS; set the signing secret (whsec_…) of the webhook endpoint <PUBLIC_URL>/payments/stripe/webhook.');
    }
    stripe = { secretKey, webhookSecret };
  } else if (env.STRIPE_SECRET_KEY || env.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError('PAYMENT_PROVIDERS', 'Stripe keys are set but stripe is not in PAYMENT_PROVIDERS; add it (e.g. PAYMENT_PROVIDERS=stripe) or remove the keys.');
  }
  return Object.freeze({ sandbox: flag(env, 'SANDBOX', isLoopbackUrl(publicUrl)), enabled: Object.freeze(enabled), stripe });
}

export function envToConfig(env: RawEnv): Readonly<Config> {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST ?? '0.0.0.0';
  let publicUrl = env.PUBLIC_URL ?? `http://localhost:${port}`;
  try {
    const parsed = new URL(publicUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError('PUBLIC_URL', `"${publicUrl}" is not an http(s) URL; use e.g. https://alerts.example.com.`);
  }
  publicUrl = publicUrl.replace(/\/+$/, '');
  const dataDir = path.resolve(env.DATA_DIR ?? 'data');

  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `"${env.LOG_LEVEL}" is not one of ${LOG_LEVELS.join(', ')}.`);
  }

  const redisUrl = env.REDIS_URL ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://.');
  }
  const redisPrefix = env.REDIS_PREFIX ?? 'openalerts';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(redisPrefix)) throw new ConfigError('REDIS_PREFIX', 'use 1–64 letters, digits, dots, dashes, colons or underscores.');
  const metricsToken = env.METRICS_TOKEN ?? null;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN', 'use at least 16 printable characters without spaces (e.g. `openssl rand -hex 24`).');
  }
  for (const key of ['SECRET_KEY', 'REALTIME_TOKEN_SECRET'] as const) {
    const value = env[key];
    if (value !== undefined && value.length < 32) {
      throw new ConfigError(key, 'is too short; use at least 32 random characters (e.g. `openssl rand -hex 32`).');
    }
  }

  return Object.freeze({
    port,
    host,
    publicUrl,
    dataDir,
    database: databaseConfig(env, dataDir),
    redisUrl,
    redisPrefix,
    logLevel,
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 365 * 24 * 3600, 60, 10 * 365 * 24 * 3600),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 2 * 365 * 24 * 3600, 60, 10 * 365 * 24 * 3600),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    historySize: integer(env, 'HISTORY_SIZE', 100, 0, 100_000),
    historyTtl: integer(env, 'HISTORY_TTL', 600, 1, 30 * 24 * 3600),
    secretKey: env.SECRET_KEY ?? null,
    realtimeTokenSecret: env.REALTIME_TOKEN_SECRET ?? null,
    trustProxy: trustProxy(env.TRUST_PROXY),
    pkceAllowPlain: flag(env, 'PKCE_ALLOW_PLAIN'),
    mediaMaxBytes: integer(env, 'MEDIA_MAX_BYTES', 8 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    prettyLogs: env.NODE_ENV !== 'production' && Boolean(process.stdout.isTTY),
    metricsToken,
    webhooks: {
      allowHttp: flag(env, 'WEBHOOKS_ALLOW_HTTP'),
      timeoutMs: integer(env, 'WEBHOOKS_TIMEOUT_MS', 10_000, 100, 60_000),
      retryWindowMs: integer(env, 'WEBHOOKS_RETRY_WINDOW', 24 * 3600, 1, 7 * 24 * 3600) * 1000,
      retryBaseMs: integer(env, 'WEBHOOKS_RETRY_BASE_MS', 5_000, 1, 3600_000),
      secretOverlapMs: integer(env, 'WEBHOOKS_SECRET_OVERLAP', 24 * 3600, 0, 7 * 24 * 3600) * 1000,
      logRetentionMs: integer(env, 'WEBHOOKS_LOG_RETENTION', 30, 1, 3650) * 24 * 3600_000,
      threadNice: dispatcherThreadNice(env),
    },
    payments: paymentsConfig(env, publicUrl),
  });
}
