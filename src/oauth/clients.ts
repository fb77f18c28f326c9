import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { appSecret } from '../modules/apps/apps.service.js';
import type { AppRow } from '../modules/apps/apps.table.js';
import { safeEqual } from '../security/crypto.js';
import { deletePublicClient, findClientApp, insertPublicClient } from './oauth.repository.js';

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
  const found = await findClientApp(db, clientId);
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
  if (isPublic) await insertPublicClient(db, clientId, Date.now());
  else await deletePublicClient(db, clientId);
}

/** Constant-time compare against the sealed client_secret (architecture.md convention 9). */
export function secretMatches(key: Buffer, client: OAuthClient, presented: string): boolean {
  return safeEqual(appSecret(key, client.row), presented);
}
