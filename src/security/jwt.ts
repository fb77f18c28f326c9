import type { Hs256Outcome } from './hs256-check.js';
import { SignJWT, type JWTPayload } from 'jose';

/**
 * The real-time tokens' format: JWT HS256 with the server secret (compatibility.md §5 "Tokens").
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
 * to the user (checked in the modern protocol only) — compatibility.md §5 "Subscribe to a `$` channel".
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

/**
 * Verifies HS256 tokens with once-encoded key material through fast-jwt's synchronous verifier
 * (src/security/hs256-check.ts, loaded on the first check). Signing stays with jose.
 *
 * Why not jose here: its v6 runs on Web Crypto only, which imports the key and runs the HMAC as a
 * thread-pool job for every token, keeping its state alive until the job returns — twice per
 * real-time connection (connection and channel token). Under a burst of connections those
 * pending jobs made V8 grow its young generation to 32 MiB, most of the RSS per connection
 * bench/realtime.ts measured at 1,000 connections, and each check cost ~130 µs of the profile.
 */
export class TokenVerifier {
  readonly #key: Uint8Array;
  #check: ((token: string) => Hs256Outcome) | null = null;

  constructor(secret: string) {
    this.#key = key(secret);
  }

  /** The token's claims; rejects with TokenExpiredError or TokenInvalidError. */
  async verify(token: string): Promise<JWTPayload> {
    // After the first call the check is synchronous: no thread-pool job, one resolved promise.
    this.#check ??= (await (hs256Module ??= import('./hs256-check.js'))).hs256Check(this.#key);
    const outcome = this.#check(token);
    if ('claims' in outcome) return outcome.claims;
    throw outcome.expired ? new TokenExpiredError('token expired') : new TokenInvalidError(outcome.refused);
  }
}

let hs256Module: Promise<typeof import('./hs256-check.js')> | null = null;
