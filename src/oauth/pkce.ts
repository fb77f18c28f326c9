import { createHash } from 'node:crypto';
import { safeEqual } from '../security/crypto.js';

export type PkceMethod = 'S256' | 'plain';

/** RFC 7636 §4.1/§4.2: 43–128 characters of [A-Z a-z 0-9 - . _ ~]. Challenge and verifier alike. */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** RFC 7636 §4.6: S256 compares BASE64URL(SHA256(ASCII(verifier))) with the challenge. */
export function pkceMatches(method: PkceMethod, challenge: string, verifier: string): boolean {
  const derived = method === 'S256' ? createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier;
  return safeEqual(derived, challenge);
}
