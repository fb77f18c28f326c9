import { SignJWT, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';

/**
 * The real-time tokens' format: JWT HS256 with the server secret (INTEROP.md §5 "Tokens").
 * Connection token claims `sub` (user id as a string) and `exp`; channel token claims `channel`,
 * `client`, `sub` and `exp`; private claims (`extra`) name what the token was issued under, for
 * revocation (modules/realtime-tokens). A Centrifugo configured with the same HMAC secret accepts
 * the same tokens. Who may have which token is decided by the realtime-tokens service, not here.
 */

const encoder = new TextEncoder();

function key(secret: string): Uint8Array {
  if (!secret) throw new Error('realtime token secret is empty');
  return encoder.encode(secret);
}

/**
 * `exp` is set only when `ttlSeconds` is given: without it the token does not expire, as
 * Centrifugo treats a connection token with no `exp`. `extra` claims never override `sub`/`exp`.
 */
export async function signConnectionToken(
  secret: string,
  userId: string | number,
  ttlSeconds?: number,
  extra?: Record<string, unknown>,
): Promise<string> {
  const jwt = new SignJWT({ ...extra }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(String(userId));
  if (ttlSeconds !== undefined) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  return jwt.sign(key(secret));
}

/**
 * `client` binds the token to one connection (checked in the legacy protocol only); `sub` binds it
 * to the user (checked in the modern protocol only) — INTEROP.md §5 "Subscribe to a `$` channel".
 */
export async function signChannelToken(
  secret: string,
  p: { client?: string; channel: string; sub?: string; ttlSeconds?: number; extra?: Record<string, unknown> },
): Promise<string> {
  const claims: Record<string, unknown> = { ...p.extra, channel: p.channel };
  if (p.client !== undefined) claims.client = p.client;
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' });
  if (p.sub !== undefined) jwt.setSubject(p.sub);
  if (p.ttlSeconds !== undefined) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + p.ttlSeconds);
  return jwt.sign(key(secret));
}

export class TokenExpiredError extends Error {}
export class TokenInvalidError extends Error {}

/** Verifies once-encoded key material; HS256 only, `exp`/`nbf` checked with no clock tolerance. */
export class TokenVerifier {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = key(secret);
  }

  async verify(token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      return payload;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new TokenExpiredError('token expired');
      throw new TokenInvalidError(err instanceof Error ? err.message : 'invalid token');
    }
  }
}
