import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { randomToken, sha256Hex } from '../security/crypto.js';
import { Revocations, type Revocation } from '../security/revocations.js';
import { TokenCache } from './token-cache.js';
import * as repo from './tokens.repository.js';

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

export interface TokenLifetimes {
  accessTokenTtl: number;
  refreshTokenTtl: number;
}

const splitScopes = (s: string) => (s ? s.split(' ') : []);

/**
 * Opaque random tokens, stored only as SHA-256 hashes. Grants own tokens: revoking a grant revokes
 * every token issued under it. Every revocation goes through `revocations`, which evicts this
 * store's cache and tells everything else that must forget it (real-time tokens and sockets, the
 * other nodes); an eviction announced on another node reaches this cache the same way.
 */
export class TokenStore {
  readonly cache: TokenCache;
  readonly revocations: Revocations;
  readonly #checkListeners = new Set<(valid: boolean, cached: boolean) => void>();
  /**
   * Bumped by every revocation heard. verify() caches only when none happened while it read the
   * database, so a token being revoked concurrently is never put back into the cache.
   */
  #revocationsHeard = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly lifetimes: TokenLifetimes,
    options: { revocations?: Revocations; cache?: TokenCache } = {},
  ) {
    this.cache = options.cache ?? new TokenCache();
    this.revocations = options.revocations ?? new Revocations();
    this.revocations.on((r) => this.#evict(r));
  }

  /** Seconds an access token lives (config ACCESS_TOKEN_TTL). */
  get accessTokenTtl(): number {
    return this.lifetimes.accessTokenTtl;
  }

  /** Creates a grant row; call inside the transaction that validates the authorization. */
  async createGrant(tx: Kysely<DB>, grant: { clientId: number; userId: number | null; scopes: readonly string[]; kind: 'authorization_code' | 'implicit' | 'client_credentials' }): Promise<number> {
    return repo.insertGrant(tx, { ...grant, scopes: grant.scopes.join(' ') }, Date.now());
  }

  /** Issues an access token (and optionally a refresh token) under an existing grant. */
  async issue(tx: Kysely<DB>, grant: { grantId: number; clientId: number; userId: number | null; scopes: readonly string[] }, withRefresh: boolean): Promise<IssuedTokens> {
    const now = Date.now();
    const accessToken = randomToken();
    const scopes = grant.scopes.join(' ');
    const expiresAt = now + this.lifetimes.accessTokenTtl * 1000;
    await repo.insertAccessToken(tx, { hash: sha256Hex(accessToken), grantId: grant.grantId, clientId: grant.clientId, userId: grant.userId, scopes, expiresAt }, now);
    const issued: IssuedTokens = { accessToken, expiresIn: this.lifetimes.accessTokenTtl };
    if (withRefresh) {
      const refreshToken = randomToken();
      await repo.insertRefreshToken(tx, { hash: sha256Hex(refreshToken), grantId: grant.grantId, scopes, expiresAt: now + this.lifetimes.refreshTokenTtl * 1000 }, now);
      issued.refreshToken = refreshToken;
    }
    return issued;
  }

  /** Null for unknown, expired or revoked tokens, and tokens of a deactivated user. Cached after the first successful check. */
  async verify(token: string): Promise<AccessTokenInfo | null> {
    if (!token || token.length > 512) return this.#checked(null, false);
    const hash = sha256Hex(token);
    const cached = this.cache.get(hash);
    if (cached) return this.#checked(cached, true);
    const heard = this.#revocationsHeard;
    const row = await repo.findAccessTokenForVerify(this.db, hash);
    if (!row || row.revoked_at !== null || row.grant_revoked_at !== null || row.expires_at <= Date.now()) return this.#checked(null, false);
    if (row.user_id !== null && row.user_active !== 1) return this.#checked(null, false);
    const info: AccessTokenInfo = { grantId: row.grant_id, clientId: row.client_id, userId: row.user_id, scopes: splitScopes(row.scopes), expiresAt: row.expires_at };
    if (heard === this.#revocationsHeard) this.cache.set(hash, info);
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
   * After the transaction that revoked these grants commits (never before: a check that heard of
   * it must not read the old rows): every node forgets them and closes the sockets that used them.
   */
  announceGrants(grantIds: readonly number[]): void {
    for (const grantId of grantIds) this.revocations.announce({ kind: 'grant', grantId });
  }

  /** Revokes one access token (RFC 7009 for an access token), in its own statement, and announces it. */
  async revokeAccessToken(db: Kysely<DB>, token: string): Promise<boolean> {
    const hash = sha256Hex(token);
    const revoked = await repo.revokeAccessTokenRow(db, hash, Date.now());
    this.revocations.announce({ kind: 'token', hash });
    return revoked;
  }

  /** Revokes grants in their own transaction and announces them once committed. */
  async revokeGrantsNow(grantIds: readonly number[]): Promise<void> {
    if (grantIds.length === 0) return;
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      for (const grantId of grantIds) await repo.revokeGrantRows(tx, grantId, now);
    });
    this.announceGrants(grantIds);
  }

  #evict(revocation: Revocation): void {
    this.#revocationsHeard += 1;
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
      case 'widget':
        break;
    }
  }
}
