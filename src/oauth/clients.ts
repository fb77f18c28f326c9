import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { appSecret } from '../modules/apps/apps.service.js';
import type { AppRow } from '../modules/apps/apps.table.js';
import { safeEqual } from '../security/crypto.js';

/** An application as the OAuth server sees it. */
export interface OAuthClient {
  id: number;
  name: string;
  redirectUris: readonly string[];
  /** RFC 6749 §2.1: cannot keep a secret; authenticates by client_id alone and must use PKCE. */
  isPublic: boolean;
  merchandiseAccess: boolean;
  row: AppRow;
}

export async function loadClient(db: Kysely<DB>, clientId: number): Promise<OAuthClient | undefined> {
  if (!Number.isSafeInteger(clientId) || clientId <= 0) return undefined;
  const found = await db
    .selectFrom('apps')
    .leftJoin('oauth_public_clients as pc', 'pc.client_id', 'apps.id')
    .selectAll('apps')
    .select('pc.client_id as public_client_id')
    .where('apps.id', '=', clientId)
    .executeTakeFirst();
  if (!found) return undefined;
  const { public_client_id, ...row } = found;
  return {
    id: row.id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    isPublic: public_client_id !== null,
    merchandiseAccess: row.merchandise_access === 1,
    row,
  };
}

/** Marks an application public (or confidential again). For the CLI/dashboard; off by default. */
export async function setPublicClient(db: Kysely<DB>, clientId: number, isPublic: boolean): Promise<void> {
  if (isPublic) {
    await db.insertInto('oauth_public_clients').values({ client_id: clientId, created_at: Date.now() }).onConflict((oc) => oc.column('client_id').doNothing()).execute();
  } else {
    await db.deleteFrom('oauth_public_clients').where('client_id', '=', clientId).execute();
  }
}

/** Constant-time compare against the sealed client_secret (DESIGN: timingSafeEqual for every secret). */
export function secretMatches(key: Buffer, client: OAuthClient, presented: string): boolean {
  return safeEqual(appSecret(key, client.row), presented);
}
