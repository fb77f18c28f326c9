import type { Generated, Selectable } from 'kysely';

/**
 * One authorization of a client by a user (or by itself, for client_credentials). Every token is
 * issued under a grant; revoking the grant revokes them all (RFC 6749 §10.5/§10.4 reuse detection).
 */
export interface OAuthGrantsTable {
  id: Generated<number>;
  client_id: number;
  /** Null for client_credentials. */
  user_id: number | null;
  /** Space-separated. */
  scopes: string;
  kind: 'authorization_code' | 'implicit' | 'client_credentials';
  created_at: number;
  revoked_at: number | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  client_id: number;
  user_id: number;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: 'S256' | 'plain' | null;
  expires_at: number;
  /** Set at exchange; a second exchange revokes this grant (RFC 6749 §4.1.2). */
  used_at: number | null;
  grant_id: number | null;
  created_at: number;
  /** 1 when the authorization request carried redirect_uri: the token request must repeat it (RFC 6749 §4.1.3). */
  redirect_uri_given: Generated<number>;
}

export interface OAuthAccessTokensTable {
  token_hash: string;
  grant_id: number;
  client_id: number;
  user_id: number | null;
  scopes: string;
  expires_at: number;
  created_at: number;
  revoked_at: number | null;
}

export interface OAuthRefreshTokensTable {
  token_hash: string;
  grant_id: number;
  scopes: string;
  expires_at: number;
  created_at: number;
  /** Set when rotated; presenting a used refresh token revokes the whole grant (RFC 9700 §4.14.2). */
  used_at: number | null;
  revoked_at: number | null;
}

/** Applications that cannot keep a secret (see 0007_oauth_extra): client_id alone, PKCE required. */
export interface OAuthPublicClientsTable {
  client_id: number;
  created_at: number;
}

export interface OAuthTables {
  oauth_public_clients: OAuthPublicClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
}

export type GrantRow = Selectable<OAuthGrantsTable>;
export type CodeRow = Selectable<OAuthCodesTable>;
export type RefreshTokenRow = Selectable<OAuthRefreshTokensTable>;
