import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { listAuthorizedApps, revokeUserClient, type AuthorizedApp } from './oauth.repository.js';
import type { TokenStore } from './token-store.js';

/** The applications a streamer has authorized and not revoked ("Authorized applications"). */
export function authorizedApps(db: Kysely<DB>, userId: number): Promise<AuthorizedApp[]> {
  return listAuthorizedApps(db, userId);
}

/**
 * The streamer withdraws an application's access: its grants, their tokens and outstanding codes
 * are revoked in one transaction; once committed, every node forgets the grants and closes the
 * sockets connected with their real-time tokens. Unknown applications revoke nothing.
 */
export async function revokeAuthorizedApp(db: Kysely<DB>, tokens: TokenStore, userId: number, clientId: number): Promise<void> {
  const revoked = await db.transaction().execute((tx) => revokeUserClient(tx, userId, clientId));
  tokens.announceGrants(revoked);
}
