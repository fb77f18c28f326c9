import type { JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ForbiddenError, InsufficientScopeError, msg } from '../../domain/errors.js';
import { grantUsableBy } from '../../oauth/tokens.repository.js';
import { signChannelToken, signConnectionToken, TokenVerifier } from '../../security/jwt.js';
import type { Revocation, Revocations } from '../../security/revocations.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { currentWidgetKey, widgetKeyOf } from '../widgets/widget-tokens.service.js';
import { channelAccess } from './channel-access.js';

/**
 * The real-time tokens (JWT, compatibility.md §5) of the three kinds of holders, issued and checked in one
 * place:
 * - an application, through an OAuth grant: `sub` is the user id, and the private claims
 *   `grant_id` and `app_id` (RFC 7519 §4.3) name the grant and its application;
 * - the streamer's own dashboard (a browser session): `sub` is the user id, no private claim;
 * - a widget (OBS browser source): `sub` is `widget:<user id>` — never a plain user id, so a widget
 *   token cannot stand in for the streamer's own — and `widget_key` names the widget token.
 *
 * A signed, unexpired token is not enough: at connect and at every subscribe the real-time node
 * asks `allowed`, which checks what the token was issued under — the grant not revoked, the account
 * active, the widget token not regenerated. When one of those is revoked (`Revocations`), the
 * sockets holding such tokens are closed on every node (`onRevoked`).
 *
 * Tokens without the private claims (issued before they existed; the dashboard's, which live five
 * minutes) are checked against the account alone.
 */

export const widgetSubject = (userId: number): string => `widget:${userId}`;

/** What an application's tokens are issued under: the verified bearer token of the request. */
export interface GrantHolder {
  grantId: number;
  clientId: number;
  /** Null for client_credentials tokens, which have no real-time access. */
  userId: number | null;
  scopes: readonly string[];
}

/** Positive checks are reused this long; any revocation heard clears them all. */
const ALLOWED_TTL_MS = 60_000;
const ALLOWED_MAX_ENTRIES = 10_000;

interface Holder {
  userId: number;
  widget: boolean;
  grantId?: number;
  appId?: number;
  widgetKey?: string;
}

const positiveInt = (v: unknown): number | undefined => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined);

/** Whose token this is; null for a subject that is none of our users (nothing here can revoke it). */
function holderOf(claims: JWTPayload): Holder | null {
  const match = /^(widget:)?([1-9]\d{0,15})$/.exec(typeof claims.sub === 'string' ? claims.sub : '');
  if (!match) return null;
  return {
    userId: Number(match[2]),
    widget: match[1] !== undefined,
    grantId: positiveInt(claims.grant_id),
    appId: positiveInt(claims.app_id),
    widgetKey: typeof claims.widget_key === 'string' ? claims.widget_key : undefined,
  };
}

/** Whether a token with these claims was issued under what `revocation` revoked. */
export function revokedBy(revocation: Revocation, claims: JWTPayload): boolean {
  const holder = holderOf(claims);
  if (!holder) return false;
  switch (revocation.kind) {
    case 'grant':
      return holder.grantId === revocation.grantId;
    case 'client':
      return holder.appId === revocation.clientId;
    case 'user':
      return holder.userId === revocation.userId;
    case 'widget':
      return holder.widget && holder.userId === revocation.userId && holder.widgetKey !== revocation.key;
    case 'token':
      // One access token: the grant and its real-time tokens stay (RFC 7009 §2.1 leaves the grant to the server).
      return false;
  }
}

export class RealtimeTokens {
  readonly #jwt: TokenVerifier;
  /** Holders found allowed, by `sub|grant|widget key` → until when the answer may be reused. */
  readonly #allowed = new Map<string, number>();
  /** Bumped by every revocation heard: a check that overlapped one is not cached. */
  #heard = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly secret: string,
    private readonly revocations: Revocations,
  ) {
    this.#jwt = new TokenVerifier(secret);
    revocations.on(() => {
      this.#heard += 1;
      this.#allowed.clear();
    });
  }

  /** An application's connection token (the profile's `socket_connection_token`). */
  async connectionForGrant(holder: GrantHolder, ttlSeconds: number): Promise<string> {
    const userId = this.#grantUser(holder);
    return signConnectionToken(this.secret, userId, ttlSeconds, { grant_id: holder.grantId, app_id: holder.clientId });
  }

  /**
   * Channel tokens for an application (spec 4.9 / 5.6): each channel must be the user's own and its
   * scope granted, else 403 naming it. Each token carries `client` (checked by the legacy protocol)
   * and `sub` (checked by the modern one), per compatibility.md §5.
   */
  async channelsForGrant(holder: GrantHolder, channels: readonly string[], client: string, ttlSeconds: number): Promise<{ channel: string; token: string }[]> {
    const userId = this.#grantUser(holder);
    const unique = [...new Set(channels)];
    for (const channel of unique) {
      const access = channelAccess(channel);
      if (!access || access.userId !== userId) throw new ForbiddenError(msg('err.realtime.channel_not_yours', { channel }));
      if (!holder.scopes.includes(access.scope)) throw new InsufficientScopeError(access.scope);
    }
    const extra = { grant_id: holder.grantId, app_id: holder.clientId };
    return Promise.all(unique.map(async (channel) => ({ channel, token: await signChannelToken(this.secret, { channel, client, sub: String(userId), ttlSeconds, extra }) })));
  }

  /** The streamer's dashboard, signed in with a session. */
  connectionForUser(userId: number, ttlSeconds: number): Promise<string> {
    return signConnectionToken(this.secret, userId, ttlSeconds);
  }

  channelForUser(userId: number, channel: string, ttlSeconds: number): Promise<string> {
    return signChannelToken(this.secret, { channel, sub: String(userId), ttlSeconds });
  }

  /** A widget's connection token and a token for each of `channels`, bound to the widget token it presented. */
  async forWidget(userId: number, widgetToken: string, channels: readonly string[], ttlSeconds: number): Promise<{ connection_token: string; channels: Record<string, string> }> {
    const sub = widgetSubject(userId);
    const extra = { widget_key: widgetKeyOf(widgetToken) };
    const [connection, ...tokens] = await Promise.all([
      signConnectionToken(this.secret, sub, ttlSeconds, extra),
      ...channels.map((channel) => signChannelToken(this.secret, { channel, sub, ttlSeconds, extra })),
    ]);
    return { connection_token: connection!, channels: Object.fromEntries(channels.map((n, i) => [n, tokens[i]!])) };
  }

  /** Signature and expiry (HS256); throws TokenExpiredError or TokenInvalidError. */
  async verify(token: string): Promise<JWTPayload> {
    return this.#jwt.verify(token);
  }

  /** Whether what a verified token was issued under still stands: the real-time node asks at connect and subscribe. */
  async allowed(claims: JWTPayload): Promise<boolean> {
    const holder = holderOf(claims);
    if (!holder) return true;
    const key = `${claims.sub}|${holder.grantId ?? ''}|${holder.widgetKey ?? ''}`;
    const now = Date.now();
    const until = this.#allowed.get(key);
    if (until !== undefined && until > now) return true;
    const heard = this.#heard;
    const ok = await this.#stillStands(holder);
    if (ok && heard === this.#heard) {
      if (this.#allowed.size >= ALLOWED_MAX_ENTRIES) this.#allowed.clear();
      this.#allowed.set(key, now + ALLOWED_TTL_MS);
    }
    return ok;
  }

  /**
   * Calls `disconnect` for every revocation, on whichever node it happened, with a test for the
   * claims of the tokens it revoked: the real-time node closes the sockets holding such tokens.
   */
  onRevoked(disconnect: (revoked: (claims: JWTPayload) => boolean) => void): () => void {
    return this.revocations.on((revocation) => disconnect((claims) => revokedBy(revocation, claims)));
  }

  async #stillStands(holder: Holder): Promise<boolean> {
    if (holder.grantId !== undefined) return !holder.widget && grantUsableBy(this.db, holder.grantId, holder.userId);
    if (holder.widget && holder.widgetKey !== undefined) return (await currentWidgetKey(this.db, holder.userId)) === holder.widgetKey;
    return (await findStreamer(this.db, holder.userId))?.is_active === 1;
  }

  #grantUser(holder: GrantHolder): number {
    if (holder.userId === null) throw new ForbiddenError(msg('err.realtime.user_token'));
    return holder.userId;
  }
}
