import { createVerifier, TokenError } from 'fast-jwt';
import type { JWTPayload } from 'jose';

/** What one check found: the claims, or why the token is refused. */
export type Hs256Outcome = { claims: JWTPayload } | { refused: string; expired: boolean };

/**
 * fast-jwt's synchronous HS256 verifier (the one @fastify/jwt uses; node:crypto, `exp`/`nbf` with
 * no clock tolerance). Its own module so that fast-jwt and what it brings (asn1.js and bn.js for
 * key formats we never use, ~180 kB) load on the first token checked, not at every start.
 */
export function hs256Check(key: Uint8Array): (token: string) => Hs256Outcome {
  const verify = createVerifier({ key: Buffer.from(key), algorithms: ['HS256'] }) as (token: string) => JWTPayload;
  return (token) => {
    try {
      return { claims: verify(token) };
    } catch (err) {
      if (err instanceof TokenError) return { refused: err.message, expired: err.code === TokenError.codes.expired };
      throw err;
    }
  };
}
