import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { decryptSecret, encryptSecret, randomToken, sha256Hex } from '../../security/crypto.js';
import type { Revocations } from '../../security/revocations.js';
import type { UserRow } from '../accounts/accounts.table.js';
import * as repo from './widget-tokens.repository.js';

/**
 * Widget tokens: the secret in an OBS browser-source URL (`/widget/alerts?token=…`), which has no
 * log-in. 192 random bits, base64url. Requests are matched by the token's SHA-256 (indexed, unique);
 * a sealed copy (AES-256-GCM with the app's encryption key) lets the settings page show the URL
 * again. Regenerating replaces both, so the old URL stops working at once, and announces it: widgets
 * open with the old token are disconnected on every node, and their real-time tokens are refused.
 */

const TOKEN_BYTES = 24;
/** Anything longer is not one of ours; refuse before hashing. */
const MAX_TOKEN_LENGTH = 128;

/**
 * Names one widget token in the real-time tokens issued for it (claim `widget_key`), without
 * exposing the token or the hash requests are matched by: 64 bits of a SHA-256 over the hash.
 */
export function widgetKeyOfHash(tokenHash: string): string {
  return sha256Hex(`widget-key:${tokenHash}`).slice(0, 16);
}

export const widgetKeyOf = (token: string): string => widgetKeyOfHash(sha256Hex(token));

function sealed(key: Buffer, token: string): repo.WidgetTokenValues {
  return { token_hash: sha256Hex(token), token_sealed: encryptSecret(key, token), created_at: Date.now() };
}

/** The streamer's widget token, created on first use. Concurrent first uses agree on one token. */
export async function widgetTokenFor(db: Kysely<DB>, key: Buffer, userId: number): Promise<string> {
  const existing = await repo.findSealedWidgetToken(db, userId);
  if (existing) return decryptSecret(key, existing);
  await repo.insertWidgetTokenIfAbsent(db, userId, sealed(key, randomToken(TOKEN_BYTES)));
  const stored = await repo.findSealedWidgetToken(db, userId);
  if (stored === undefined) throw new Error(`widget token of user ${userId} vanished after insert`);
  return decryptSecret(key, stored);
}

/**
 * A new token for the streamer; the previous one stops matching in the same statement. Once
 * stored, widgets still using the previous token lose their real-time connection on every node.
 */
export async function regenerateWidgetToken(db: Kysely<DB>, key: Buffer, revocations: Revocations, userId: number): Promise<string> {
  const token = randomToken(TOKEN_BYTES);
  await repo.replaceWidgetToken(db, userId, sealed(key, token));
  revocations.announce({ kind: 'widget', userId, key: widgetKeyOf(token) });
  return token;
}

/** The active streamer a widget token belongs to, or null (unknown, regenerated, or account disabled). */
export async function userForWidgetToken(db: Kysely<DB>, token: unknown): Promise<UserRow | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const user = await repo.findUserByWidgetTokenHash(db, sha256Hex(token));
  return user && user.is_active ? user : null;
}

/** The key of the streamer's current widget token while the account is active, else null. */
export async function currentWidgetKey(db: Kysely<DB>, userId: number): Promise<string | null> {
  const found = await repo.findWidgetTokenHash(db, userId);
  return found?.active ? widgetKeyOfHash(found.tokenHash) : null;
}
