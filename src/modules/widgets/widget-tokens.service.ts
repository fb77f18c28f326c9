import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { decryptSecret, encryptSecret, randomToken, sha256Hex } from '../../security/crypto.js';
import type { UserRow } from '../accounts/accounts.table.js';

/**
 * Widget tokens: the secret in an OBS browser-source URL (`/widget/alerts?token=…`), which has no
 * log-in. 192 random bits, base64url. Requests are matched by the token's SHA-256 (indexed, unique);
 * a sealed copy (AES-256-GCM with the app's encryption key) lets the settings page show the URL
 * again. Regenerating replaces both, so the old URL stops working at once; widgets already open
 * lose their real-time connection at their next token refresh (see widget.pages.ts).
 */

const TOKEN_BYTES = 24;
/** Anything longer is not one of ours; refuse before hashing. */
const MAX_TOKEN_LENGTH = 128;

/** The streamer's widget token, created on first use. Concurrent first uses agree on one token. */
export async function widgetTokenFor(db: Kysely<DB>, key: Buffer, userId: number): Promise<string> {
  const existing = await db.selectFrom('widget_tokens').select('token_sealed').where('user_id', '=', userId).executeTakeFirst();
  if (existing) return decryptSecret(key, existing.token_sealed);
  const token = randomToken(TOKEN_BYTES);
  await db
    .insertInto('widget_tokens')
    .values({ user_id: userId, token_hash: sha256Hex(token), token_sealed: encryptSecret(key, token), created_at: Date.now() })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  const row = await db.selectFrom('widget_tokens').select('token_sealed').where('user_id', '=', userId).executeTakeFirstOrThrow();
  return decryptSecret(key, row.token_sealed);
}

/** A new token for the streamer; the previous one stops matching in the same statement. */
export async function regenerateWidgetToken(db: Kysely<DB>, key: Buffer, userId: number): Promise<string> {
  const token = randomToken(TOKEN_BYTES);
  const values = { token_hash: sha256Hex(token), token_sealed: encryptSecret(key, token), created_at: Date.now() };
  await db
    .insertInto('widget_tokens')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
  return token;
}

/** The active streamer a widget token belongs to, or null (unknown, regenerated, or account disabled). */
export async function userForWidgetToken(db: Kysely<DB>, token: unknown): Promise<UserRow | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const user = await db
    .selectFrom('widget_tokens')
    .innerJoin('users', 'users.id', 'widget_tokens.user_id')
    .selectAll('users')
    .where('widget_tokens.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  return user && user.is_active ? user : null;
}
