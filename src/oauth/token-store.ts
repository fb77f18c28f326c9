import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { randomToken, sha256Hex } from '../security/crypto.js';
import { TokenCache } from './token-cache.js';

/** What a valid bearer token grants (the `request.auth` of API routes). */
export interface AccessTokenInfo {
  grantId: number;
  clientId: number;
  /** Null for client_credentials tokens. */
  userId: number | null;
  scopes: readonly string[];
  expiresAt: number;
}

export interface IssuedTokens {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  refreshToken?: string;
}

/** Something revoked, for listeners that must forget it too (other nodes' caches). */
export type Revocation = { kind: 'grant'; grantId: number } | { kind: 'client'; clientId: number } | { kind: 'user'; userId: number } | { kind: 'token'; hash: string };

export interface TokenLifetimes {
  accessTokenTtl: number;
  refreshTokenTtl: number;
}

const splitScopes = (s: string) => (s ? s.split(' ') : []);

/**
 * Opaque random tokens, stored only as SHA-256 hashes. Grants own tokens: revoking a grant revokes
 * every token issued under it.
 */
export class TokenStore {
  readonly cache: TokenCache;
  readonly #listeners = new Set<(r: Revocation) => void>();
  readonly #checkListeners = new Set<(valid: boolean, cached: boolean) => void>();
  /**
   * Bumped by every forget(). verify() caches only when no revocation happened while it read the
   * database, so a token being revoked concurrently is never put back into the cache.
   */
  #revocations = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly lifetimes: TokenLifetimes,
    cache = new TokenCache(),
  ) {
    this.cache = cache;
  }

  /** Seconds an access token lives (config ACCESS_TOKEN_TTL). */
  get accessTokenTtl(): number {
    return this.lifetimes.accessTokenTtl;
  }

  /** Creates a grant row; call inside the transaction that validates the authorization. */
  async createGrant(tx: Kysely<DB>, grant: { clientId: number; userId: number | null; scopes: readonly string[]; kind: 'authorization_code' | 'implicit' | 'client_credentials' }): Promise<number> {
    const row = await tx
      .insertInto('oauth_grants')
      .values({ client_id: grant.clientId, user_id: grant.userId, scopes: grant.scopes.join(' '), kind: grant.kind, created_at: Date.now(), revoked_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Issues an access token (and optionally a refresh token) under an existing grant. */
  async issue(tx: Kysely<DB>, grant: { grantId: number; clientId: number; userId: number | null; scopes: readonly string[] }, withRefresh: boolean): Promise<IssuedTokens> {
    const now = Date.now();
    const accessToken = randomToken();
    const scopes = grant.scopes.join(' ');
    await tx
      .insertInto('oauth_access_tokens')
      .values({
        token_hash: sha256Hex(accessToken),
        grant_id: grant.grantId,
        client_id: grant.clientId,
        user_id: grant.userId,
        scopes,
        expires_at: now + this.lifetimes.accessTokenTtl * 1000,
        created_at: now,
        revoked_at: null,
      })
      .execute();
    const issued: IssuedTokens = { accessToken, expiresIn: this.lifetimes.accessTokenTtl };
    if (withRefresh) {
      const refreshToken = randomToken();
      await tx
        .insertInto('oauth_refresh_tokens')
        .values({ token_hash: sha256Hex(refreshToken), grant_id: grant.grantId, scopes, expires_at: now + this.lifetimes.refreshTokenTtl * 1000, created_at: now, used_at: null, revoked_at: null })
        .execute();
      issued.refreshToken = refreshToken;
    }
    return issued;
  }

  /** Null for unknown, expired or revoked tokens. Cached after the first successful check. */
  async verify(token: string): Promise<AccessTokenInfo | null> {
    if (!token || token.length > 512) return this.#checked(null, false);
    const hash = sha256Hex(token);
    const cached = this.cache.get(hash);
    if (cached) return this.#checked(cached, true);
    const epoch = this.#revocations;
    const row = await this.db
      .selectFrom('oauth_access_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.grant_id', 't.client_id', 't.user_id', 't.scopes', 't.expires_at', 't.revoked_at', 'g.revoked_at as grant_revoked_at'])
      .where('t.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || row.grant_revoked_at !== null || row.expires_at <= Date.now()) return this.#checked(null, false);
    if (row.user_id !== null) {
      const user = await this.db.selectFrom('users').select('is_active').where('id', '=', row.user_id).executeTakeFirst();
      if (!user?.is_active) return this.#checked(null, false);
    }
    const info: AccessTokenInfo = { grantId: row.grant_id, clientId: row.client_id, userId: row.user_id, scopes: splitScopes(row.scopes), expiresAt: row.expires_at };
    if (epoch === this.#revocations) this.cache.set(hash, info);
    return this.#checked(info, false);
  }

  /** Calls `listener` after every verify(): valid or not, and whether the cache answered (metrics). */
  onCheck(listener: (valid: boolean, cached: boolean) => void): () => void {
    this.#checkListeners.add(listener);
    return () => this.#checkListeners.delete(listener);
  }

  #checked(info: AccessTokenInfo | null, cached: boolean): AccessTokenInfo | null {
    for (const listener of this.#checkListeners) listener(info !== null, cached);
    return info;
  }

  /**
   * Revokes a grant and every token under it; effective at once on this node. Inside a caller's
   * transaction the eviction happens before commit: call `forget({kind:'grant', grantId})` again
   * after commit (or use revokeGrantsNow), so a concurrent verify cannot re-cache the old row.
   */
  async revokeGrant(tx: Kysely<DB>, grantId: number): Promise<void> {
    const now = Date.now();
    await tx.updateTable('oauth_grants').set({ revoked_at: now }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
    await tx.updateTable('oauth_access_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
    await tx.updateTable('oauth_refresh_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
    this.forget({ kind: 'grant', grantId });
  }

  /** Revokes one access token (RFC 7009 for an access token). */
  async revokeAccessToken(tx: Kysely<DB>, token: string): Promise<boolean> {
    const hash = sha256Hex(token);
    const result = await tx.updateTable('oauth_access_tokens').set({ revoked_at: Date.now() }).where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
    this.forget({ kind: 'token', hash });
    return Number(result.numUpdatedRows) > 0;
  }

  /** Revokes grants in their own transaction and evicts them once committed. */
  async revokeGrantsNow(grantIds: readonly number[]): Promise<void> {
    if (grantIds.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      for (const grantId of grantIds) await this.revokeGrant(tx, grantId);
    });
    for (const grantId of grantIds) this.forget({ kind: 'grant', grantId });
  }

  /** Evicts from this node's cache and tells listeners (the cross-node invalidation bus). */
  forget(revocation: Revocation, notify = true): void {
    this.#revocations += 1;
    switch (revocation.kind) {
      case 'grant':
        this.cache.evictWhere((i) => i.grantId === revocation.grantId);
        break;
      case 'client':
        this.cache.evictWhere((i) => i.clientId === revocation.clientId);
        break;
      case 'user':
        this.cache.evictWhere((i) => i.userId === revocation.userId);
        break;
      case 'token':
        this.cache.evictToken(revocation.hash);
        break;
    }
    if (notify) for (const listener of this.#listeners) listener(revocation);
  }

  onRevoke(listener: (r: Revocation) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
