import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { randomToken, sha256Hex } from '../security/crypto.js';
import type { CodeRow } from './oauth.table.js';
import type { PkceMethod } from './pkce.js';
import { revokeGrantRows } from './tokens.repository.js';

/** RFC 6749 §4.1.2: "A maximum authorization code lifetime of 10 minutes is RECOMMENDED." */
export const CODE_TTL_MS = 10 * 60 * 1000;
/** Used codes stay a day past expiry so a late replay still revokes what they issued. */
const CODE_KEEP_MS = 24 * 3600 * 1000;

const joinScopes = (scopes: readonly string[]) => scopes.join(' ');
export const splitScopes = (s: string): string[] => (s ? s.split(' ') : []);

/** An application row with whether it is registered as a public client (RFC 6749 §2.1). */
export async function findClientApp(db: Kysely<DB>, clientId: number) {
  return db
    .selectFrom('apps')
    .leftJoin('oauth_public_clients as pc', 'pc.client_id', 'apps.id')
    .selectAll('apps')
    .select('pc.client_id as public_client_id')
    .where('apps.id', '=', clientId)
    .executeTakeFirst();
}

export async function insertPublicClient(db: Kysely<DB>, clientId: number, now: number): Promise<void> {
  await db.insertInto('oauth_public_clients').values({ client_id: clientId, created_at: now }).onConflict((oc) => oc.column('client_id').doNothing()).execute();
}

export async function deletePublicClient(db: Kysely<DB>, clientId: number): Promise<void> {
  await db.deleteFrom('oauth_public_clients').where('client_id', '=', clientId).execute();
}

export interface NewCode {
  clientId: number;
  userId: number;
  redirectUri: string;
  redirectUriGiven: boolean;
  scopes: readonly string[];
  codeChallenge: string | null;
  codeChallengeMethod: PkceMethod | null;
}

/** Stores a fresh code (hashed) and returns the plaintext once. */
export async function insertCode(db: Kysely<DB>, code: NewCode): Promise<string> {
  const now = Date.now();
  const plaintext = randomToken();
  await db.deleteFrom('oauth_codes').where('expires_at', '<', now - CODE_KEEP_MS).execute();
  await db
    .insertInto('oauth_codes')
    .values({
      code_hash: sha256Hex(plaintext),
      client_id: code.clientId,
      user_id: code.userId,
      redirect_uri: code.redirectUri,
      redirect_uri_given: code.redirectUriGiven ? 1 : 0,
      scopes: joinScopes(code.scopes),
      code_challenge: code.codeChallenge,
      code_challenge_method: code.codeChallengeMethod,
      expires_at: now + CODE_TTL_MS,
      used_at: null,
      grant_id: null,
      created_at: now,
    })
    .execute();
  return plaintext;
}

export async function findCode(db: Kysely<DB>, code: string): Promise<CodeRow | undefined> {
  return db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', sha256Hex(code)).executeTakeFirst();
}

/** Atomically claims an unused code; false when someone else used it first (a replay). */
export async function claimCode(tx: Kysely<DB>, codeHash: string, now: number): Promise<boolean> {
  const result = await tx.updateTable('oauth_codes').set({ used_at: now }).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setCodeGrant(tx: Kysely<DB>, codeHash: string, grantId: number): Promise<void> {
  await tx.updateTable('oauth_codes').set({ grant_id: grantId }).where('code_hash', '=', codeHash).execute();
}

export interface RefreshTokenWithGrant {
  tokenHash: string;
  grantId: number;
  clientId: number;
  userId: number | null;
  grantScopes: string[];
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
  grantRevokedAt: number | null;
}

export async function findRefreshToken(db: Kysely<DB>, token: string): Promise<RefreshTokenWithGrant | undefined> {
  const row = await db
    .selectFrom('oauth_refresh_tokens as r')
    .innerJoin('oauth_grants as g', 'g.id', 'r.grant_id')
    .select(['r.token_hash', 'r.grant_id', 'g.client_id', 'g.user_id', 'g.scopes', 'r.expires_at', 'r.used_at', 'r.revoked_at', 'g.revoked_at as grant_revoked_at'])
    .where('r.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    tokenHash: row.token_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    grantScopes: splitScopes(row.scopes),
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    revokedAt: row.revoked_at,
    grantRevokedAt: row.grant_revoked_at,
  };
}

/** Atomically marks a refresh token rotated; false when it was already used or revoked (a replay). */
export async function claimRefreshToken(tx: Kysely<DB>, tokenHash: string, now: number): Promise<boolean> {
  const result = await tx
    .updateTable('oauth_refresh_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findAccessToken(db: Kysely<DB>, token: string) {
  return db.selectFrom('oauth_access_tokens').select(['token_hash', 'grant_id', 'client_id', 'revoked_at']).where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
}

export async function isUserActive(db: Kysely<DB>, userId: number): Promise<boolean> {
  const user = await db.selectFrom('users').select('is_active').where('id', '=', userId).executeTakeFirst();
  return user?.is_active === 1;
}

/**
 * A grant is live while it is not revoked and still holds a usable token: an unexpired, unrevoked
 * access token, or an unexpired refresh token not yet rotated. (Expired grants stay as history.)
 */
/** Grants still in use (a live access or refresh token) of one user, or of every user (`null`). */
function liveGrants(db: Kysely<DB>, userId: number | null, now: number) {
  return db
    .selectFrom('oauth_grants as g')
    .$if(userId !== null, (q) => q.where('g.user_id', '=', userId!))
    .where('g.revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('oauth_access_tokens as a')
            .select(sql.lit(1).as('one'))
            .whereRef('a.grant_id', '=', 'g.id')
            .where('a.revoked_at', 'is', null)
            .where('a.expires_at', '>', now),
        ),
        eb.exists(
          eb
            .selectFrom('oauth_refresh_tokens as r')
            .select(sql.lit(1).as('one'))
            .whereRef('r.grant_id', '=', 'g.id')
            .where('r.revoked_at', 'is', null)
            .where('r.used_at', 'is', null)
            .where('r.expires_at', '>', now),
        ),
      ]),
    );
}

/**
 * Every scope the user has granted the client in a live grant (the skip-consent test); null when
 * there is no live grant at all.
 */
export async function grantedScopes(db: Kysely<DB>, userId: number, clientId: number, now = Date.now()): Promise<string[] | null> {
  const rows = await liveGrants(db, userId, now).select('g.scopes').where('g.client_id', '=', clientId).execute();
  return rows.length ? [...new Set(rows.flatMap((r) => splitScopes(r.scopes)))] : null;
}

export interface AuthorizedApp {
  clientId: number;
  name: string;
  scopes: string[];
  /** Epoch ms of the oldest live grant. */
  since: number;
}

/** The applications a streamer has authorized and not revoked, for the "Authorized applications" page. */
export async function listAuthorizedApps(db: Kysely<DB>, userId: number, now = Date.now()): Promise<AuthorizedApp[]> {
  const rows = await liveGrants(db, userId, now).innerJoin('apps as p', 'p.id', 'g.client_id').select(['g.client_id', 'p.name', 'g.scopes', 'g.created_at']).orderBy('g.created_at').execute();
  const byClient = new Map<number, AuthorizedApp>();
  for (const row of rows) {
    const entry = byClient.get(row.client_id) ?? { clientId: row.client_id, name: row.name, scopes: [], since: row.created_at };
    for (const scope of splitScopes(row.scopes)) if (!entry.scopes.includes(scope)) entry.scopes.push(scope);
    entry.since = Math.min(entry.since, row.created_at);
    byClient.set(row.client_id, entry);
  }
  return [...byClient.values()].sort((a, b) => a.name.localeCompare(b.name) || a.clientId - b.clientId);
}

/** A streamer who has a live grant to one of the owner's applications (the dashboard's webhook form). */
export interface OwnedAppStreamer {
  clientId: number;
  appName: string;
  userId: number;
  userName: string;
}

/** Every (application, streamer) pair with a live grant, over the applications `ownerId` owns. */
export async function streamersOfOwnedApps(db: Kysely<DB>, ownerId: number, now = Date.now()): Promise<OwnedAppStreamer[]> {
  const rows = await liveGrants(db, null, now)
    .innerJoin('apps as p', 'p.id', 'g.client_id')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .where('p.owner_id', '=', ownerId)
    .select(['g.client_id', 'p.name as app_name', 'u.id as user_id', 'u.name as user_name'])
    .distinct()
    .orderBy('p.name')
    .orderBy('u.name')
    .execute();
  return rows.map((r) => ({ clientId: r.client_id, appName: r.app_name, userId: r.user_id, userName: r.user_name }));
}

/**
 * The user withdraws the client's access: every grant of that user to that client, and every
 * outstanding code (so a code issued just before cannot be exchanged afterwards). Returns the
 * revoked grant ids, to announce after commit.
 */
export async function revokeUserClient(tx: Kysely<DB>, userId: number, clientId: number, now = Date.now()): Promise<number[]> {
  const grants = await tx.selectFrom('oauth_grants').select('id').where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
  for (const { id } of grants) await revokeGrantRows(tx, id, now);
  await tx.deleteFrom('oauth_codes').where('user_id', '=', userId).where('client_id', '=', clientId).where('used_at', 'is', null).execute();
  return grants.map((g) => g.id);
}
