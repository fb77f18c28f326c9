import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';

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

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The JSON object a base64url part encodes, or null (not JSON, or not an object). */
function jsonObject(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies HS256 tokens with once-encoded key material, synchronously on node:crypto. The checks
 * are those jose's `jwtVerify` made here (with `algorithms: ['HS256']`, no clock tolerance):
 * compact form; a protected header naming HS256 and nothing critical (`crit`); the HMAC-SHA256 of
 * `header.payload` equal to the signature (constant-time comparison); a JSON object as claims;
 * `exp`, `nbf` and `iat` numbers when present, `exp` in the future and `nbf` not.
 *
 * Why not jose: its v6 runs on Web Crypto only, which imports the key and runs the HMAC as a
 * thread-pool job for every token — about 130 µs and a few kilobytes kept alive until the job
 * returns, twice per real-time connection (connection and channel token). Under a burst of
 * connections those pending jobs made V8 grow its young generation to 32 MiB, most of the RSS
 * per connection bench/realtime.ts measured at 1,000 connections. Signing stays with jose.
 */
export class TokenVerifier {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = key(secret);
  }

  /** The token's claims; throws TokenExpiredError or TokenInvalidError. */
  verify(token: string): JWTPayload {
    const parts = typeof token === 'string' ? token.split('.') : [];
    if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) throw new TokenInvalidError('Invalid Compact JWS');
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    const header = jsonObject(headerPart);
    if (header === null) throw new TokenInvalidError('Invalid JWS Protected Header');
    if (header.alg !== 'HS256') throw new TokenInvalidError('"alg" (Algorithm) Header Parameter value not allowed');
    if (header.crit !== undefined) throw new TokenInvalidError('"crit" (Critical) Header Parameter is not supported');
    const expected = createHmac('sha256', this.key).update(`${headerPart}.${payloadPart}`).digest();
    const signature = Buffer.from(signaturePart, 'base64url');
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw new TokenInvalidError('signature verification failed');
    const claims = jsonObject(payloadPart);
    if (claims === null) throw new TokenInvalidError('JWT Claims Set must be a top-level JSON object');
    for (const name of ['exp', 'nbf', 'iat'] as const) {
      const value = claims[name];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) throw new TokenInvalidError(`"${name}" claim must be a number`);
    }
    const now = Math.floor(Date.now() / 1000);
    if (claims.nbf !== undefined && (claims.nbf as number) > now) throw new TokenInvalidError('"nbf" claim timestamp check failed');
    if (claims.exp !== undefined && (claims.exp as number) <= now) throw new TokenExpiredError('token expired');
    return claims as JWTPayload;
  }
}
