import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * Grants and the tokens issued under them. Tokens are stored only as SHA-256 hashes; every row
 * here is keyed by the hash, never by the token.
 */

export interface NewGrant {
  clientId: number;
  userId: number | null;
  scopes: string;
  kind: 'authorization_code' | 'implicit' | 'client_credentials';
}

export async function insertGrant(tx: Kysely<DB>, grant: NewGrant, now: number): Promise<number> {
  const row = await tx
    .insertInto('oauth_grants')
    .values({ client_id: grant.clientId, user_id: grant.userId, scopes: grant.scopes, kind: grant.kind, created_at: now, revoked_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface NewAccessToken {
  hash: string;
  grantId: number;
  clientId: number;
  userId: number | null;
  scopes: string;
  expiresAt: number;
}

export async function insertAccessToken(tx: Kysely<DB>, token: NewAccessToken, now: number): Promise<void> {
  await tx
    .insertInto('oauth_access_tokens')
    .values({
      token_hash: token.hash,
      grant_id: token.grantId,
      client_id: token.clientId,
      user_id: token.userId,
      scopes: token.scopes,
      expires_at: token.expiresAt,
      created_at: now,
      revoked_at: null,
    })
    .execute();
}

export async function insertRefreshToken(tx: Kysely<DB>, token: { hash: string; grantId: number; scopes: string; expiresAt: number }, now: number): Promise<void> {
  await tx
    .insertInto('oauth_refresh_tokens')
    .values({ token_hash: token.hash, grant_id: token.grantId, scopes: token.scopes, expires_at: token.expiresAt, created_at: now, used_at: null, revoked_at: null })
    .execute();
}

/** An access token with what decides whether it still works: its own and its grant's revocation, its user's state. */
export async function findAccessTokenForVerify(db: Kysely<DB>, hash: string) {
  return db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .select(['t.grant_id', 't.client_id', 't.user_id', 't.scopes', 't.expires_at', 't.revoked_at', 'g.revoked_at as grant_revoked_at', 'u.is_active as user_active'])
    .where('t.token_hash', '=', hash)
    .executeTakeFirst();
}

/** Revokes the grant and every access and refresh token under it (already revoked ones keep their time). */
export async function revokeGrantRows(tx: Kysely<DB>, grantId: number, now: number): Promise<void> {
  await tx.updateTable('oauth_grants').set({ revoked_at: now }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
  await tx.updateTable('oauth_access_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
  await tx.updateTable('oauth_refresh_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
}

/** True when the token existed and was not revoked yet. */
export async function revokeAccessTokenRow(tx: Kysely<DB>, hash: string, now: number): Promise<boolean> {
  const result = await tx.updateTable('oauth_access_tokens').set({ revoked_at: now }).where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Whether the grant exists, is not revoked and belongs to `userId`, whose account is active. */
export async function grantUsableBy(db: Kysely<DB>, grantId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_grants as g')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .select(['g.revoked_at', 'u.is_active'])
    .where('g.id', '=', grantId)
    .where('g.user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined && row.revoked_at === null && row.is_active === 1;
}
