import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { batchedRead } from '../../db/batched-read.js';
import { dialectOf } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { DatabaseUnavailableError } from '../../db/unavailable.js';
import { ForbiddenError, msg, ValidationError } from '../../domain/errors.js';
import { signedValues, verifySignature } from '../../domain/signature.js';
import { appSecret, findApp } from '../apps/apps.service.js';
import type { AppRow } from '../apps/apps.table.js';
import { findMerchantByIdentifier, merchantAuthVersion } from './merchants.repository.js';
import type { MerchantRow } from './merchants.table.js';

/** The parameters a Merchandise API request signed, captured before validation touches them. */
export interface SignedParams {
  values: string[];
  signature: unknown;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `captureSignedParams` on Merchandise API routes. */
    signedParams: SignedParams | null;
    /** The verified calling application (client_id) of a Merchandise API request. */
    merchantClientId: number | null;
    /**
     * With `verifySignedRequestCached`: the `merchant_auth` version of the credentials the request
     * was verified with, for the handler to compare with the version its own statement reads; null
     * when they were read afresh for this request.
     */
    merchantAuthVersion: number | null;
  }
}

const SIGNATURE = 'signature';

function topLevel(params: unknown, key: string): unknown {
  return params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>)[key] : undefined;
}

/**
 * Route-level preValidation hook: records every received parameter except `signature` — query and
 * body, never the path (compatibility.md §3: 4.6's path identifiers are not signed) — exactly as parsed,
 * before schema validation could coerce or strip anything.
 */
export async function captureSignedParams(request: FastifyRequest): Promise<void> {
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body;
  request.signedParams = {
    values: [...signedValues(request.query, SIGNATURE), ...signedValues(body, SIGNATURE)],
    signature: topLevel(body, SIGNATURE) ?? topLevel(request.query, SIGNATURE),
  };
}

// Decrypting the sealed secret on every call is wasted work; the cache is keyed by the sealed value,
// so a rotated secret (new sealed value) is picked up on the very next request.
const secretCache = new Map<string, string>();
const SECRET_CACHE_MAX = 1000;

function secretOf(key: Buffer, app: AppRow): string {
  let secret = secretCache.get(app.secret_sealed);
  if (secret === undefined) {
    secret = appSecret(key, app);
    if (secretCache.size >= SECRET_CACHE_MAX) secretCache.clear();
    secretCache.set(app.secret_sealed, secret);
  }
  return secret;
}

// The calling application's row, reused while no write to `apps` or `merchants` has committed
// since it was read (the `merchant_auth` version: triggers bump it in the writing transaction, so
// a change made by the CLI, another process or another node is seen by the very next request).
// The version is read before the row, so a row read after a racing write is stored under the
// older version and never reused. One primary-key read per request instead of the app row, shared
// by concurrent requests on PostgreSQL (batched-read.ts).
interface AuthCache {
  version(): Promise<number>;
  apps: Map<number, { version: number; app: AppRow | undefined }>;
}
const authCaches = new WeakMap<Kysely<DB>, AuthCache>();
const AUTH_CACHE_MAX = 1000;

function authCacheOf(db: Kysely<DB>, waitLimitMs: number): AuthCache {
  let cache = authCaches.get(db);
  if (!cache) {
    const read = batchedRead(async () => new Map([['v' as const, await merchantAuthVersion(db)]]), {
      maxWaitMs: waitLimitMs,
      timeoutError: () => new DatabaseUnavailableError(new Error(`no answer from the database within ${waitLimitMs} ms`)),
    });
    const version = dialectOf(db) === 'sqlite' ? () => merchantAuthVersion(db) : async () => (await read('v'))!;
    cache = { version, apps: new Map() };
    authCaches.set(db, cache);
  }
  return cache;
}

async function currentApp(db: Kysely<DB>, waitLimitMs: number, clientId: number): Promise<AppRow | undefined> {
  const cache = authCacheOf(db, waitLimitMs);
  const version = await cache.version();
  const hit = cache.apps.get(clientId);
  if (hit && hit.version === version) return hit.app;
  const app = await findApp(db, clientId);
  if (cache.apps.size >= AUTH_CACHE_MAX) cache.apps.clear();
  cache.apps.set(clientId, { version, app });
  return app;
}

/**
 * preHandler after `requireToken(undefined, { userRequired: false })`: the token's client must have
 * Merchandise API access, and the request must carry its signature (compatibility.md §1: missing → 400
 * validation error; wrong → 403 "Invalid signature.").
 */
export async function verifySignedRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const clientId = request.auth!.clientId;
  const { db, database, secrets } = request.server.ctx;
  const app = await currentApp(db, database.waitLimitMs, clientId);
  if (!app || !app.merchandise_access) throw new ForbiddenError(msg('err.merchant.no_access'));
  const signed = request.signedParams ?? { values: [], signature: undefined };
  const signature = signed.signature;
  if (signature === undefined || signature === null || signature === '') throw ValidationError.field(SIGNATURE, msg('err.field.required', { field: 'signature' }));
  if (typeof signature !== 'string') throw ValidationError.field(SIGNATURE, msg('err.field.type', { field: 'signature', type: 'string' }));
  if (!verifySignature(signed.values, secretOf(secrets.encryptionKey, app), signature)) throw new ForbiddenError(msg('err.merchant.bad_signature'));
  request.merchantClientId = clientId;
  request.merchantAuthVersion = null;
}

/**
 * `verifySignedRequest` for a handler that reads the `merchant_auth` version in a statement of its
 * own (PostgreSQL: the sales' batch look-up) and compares it with `request.merchantAuthVersion`,
 * re-verifying through `verifySignedRequest` when they differ (`CredentialsChangedError`): a
 * request the cached credentials accept skips the version read, a round trip. The handler's
 * statement starts after the request arrived, so a change committed before then is seen as surely
 * as by a read here. Anything the cached credentials would refuse is checked afresh (the refusal
 * may be out of date). On SQLite the version read costs no round trip: always afresh.
 */
export async function verifySignedRequestCached(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const clientId = request.auth!.clientId;
  const { db, database, secrets } = request.server.ctx;
  const hit = database.dialect === 'postgres' ? authCaches.get(db)?.apps.get(clientId) : undefined;
  const signature = request.signedParams?.signature;
  if (hit?.app?.merchandise_access && typeof signature === 'string' && signature !== '' && verifySignature(request.signedParams!.values, secretOf(secrets.encryptionKey, hit.app), signature)) {
    request.merchantClientId = clientId;
    request.merchantAuthVersion = hit.version;
    return;
  }
  await verifySignedRequest(request, reply);
}

/**
 * The credentials a request was verified with (`verifySignedRequestCached`) changed before the
 * handler's statement read them: the handler verifies the request again (`verifySignedRequest`)
 * and does its work once more.
 */
export class CredentialsChangedError extends Error {
  constructor() {
    super('the Merchandise API credentials changed since the request was verified');
  }
}

/** `merchant_identifier` → the caller's merchant: unknown → 400, another application's → 403. */
export async function callerMerchant(db: Kysely<DB>, clientId: number, identifier: string): Promise<MerchantRow> {
  const merchant = await findMerchantByIdentifier(db, identifier);
  if (!merchant) throw ValidationError.field('merchant_identifier', msg('err.field.selected_invalid', { field: 'merchant_identifier' }));
  if (merchant.app_id !== clientId) throw new ForbiddenError(msg('err.merchant.not_yours'));
  return merchant;
}
