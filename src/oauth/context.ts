import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { OAuthClient } from './clients.js';
import type { CodeRow } from './oauth.table.js';
import type { RefreshTokenWithGrant } from './oauth.repository.js';
import type { Params } from './params.js';
import type { PkceMethod } from './pkce.js';
import type { TokenStore } from './token-store.js';

/** What checks fill in as an authorization request (GET or the consent POST) is validated. */
export interface AuthorizeContext {
  readonly params: Params;
  readonly db: Kysely<DB>;
  /** PKCE_ALLOW_PLAIN: whether `code_challenge_method=plain` is still taken. */
  readonly pkceAllowPlain: boolean;
  client?: OAuthClient;
  /** Set once the redirect_uri is trusted; from then on errors go back to the client by redirect. */
  redirectUri?: string;
  redirectUriGiven: boolean;
  responseType?: 'code' | 'token';
  state?: string;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: PkceMethod | null;
}

/** Token and revocation requests: client authentication comes first, the rest depends on the endpoint. */
export interface ClientAuthContext {
  readonly params: Params;
  /** The Authorization request header, if any. */
  readonly authorization: string | undefined;
  readonly db: Kysely<DB>;
  readonly encryptionKey: Buffer;
  client?: OAuthClient;
  /** The client authenticated (or tried to) with HTTP Basic: 401s then carry WWW-Authenticate: Basic. */
  usedBasic: boolean;
}

/**
 * The part of a token or revocation context taken from the request as is; client authentication
 * (and with it `client`, `usedBasic`) is left to the `clientAuthenticated` check.
 */
export function clientRequestContext(request: FastifyRequest): ClientAuthContext & { readonly tokens: TokenStore } {
  const { ctx: app } = request.server;
  return {
    params: (request.body ?? {}) as Params,
    authorization: request.headers.authorization,
    db: app.db,
    encryptionKey: app.secrets.encryptionKey,
    tokens: app.tokens,
    usedBasic: false,
  };
}

export interface TokenContext extends ClientAuthContext {
  readonly tokens: TokenStore;
  readonly now: number;
  grantType?: string;
  /** Scopes the request asked for; undefined when `scope` was absent. */
  requestedScopes?: string[];
  code?: CodeRow;
  refresh?: RefreshTokenWithGrant;
}

export interface RevokeContext extends ClientAuthContext {
  readonly tokens: TokenStore;
  token?: string;
  tokenTypeHint?: string;
}

/** For a value an earlier check in the list is guaranteed to have set. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`OAuth check order broken: ${what} not set`);
  return value;
}
