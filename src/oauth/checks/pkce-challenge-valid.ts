import type { AuthorizeContext } from '../context.js';
import { InvalidRequestError } from '../errors.js';
import { stringParam } from '../params.js';
import { isPkceValue } from '../pkce.js';
import type { Check } from './check.js';

/**
 * RFC 7636 §4.3: `code_challenge` with `code_challenge_method` S256 or plain (default plain).
 * Always accepted on the code flow; meaningless (and ignored) for response_type=token.
 * RFC 9700 §2.1.1: `plain` sends the verifier itself through the browser, so it protects nothing
 * against whoever can read the authorization request; it is refused — stated or implied by an
 * absent method — unless the operator set PKCE_ALLOW_PLAIN for clients that cannot hash.
 */
export const pkceChallengeValid: Check<AuthorizeContext> = {
  name: 'pkce-challenge-valid',
  run(ctx) {
    const challenge = stringParam(ctx.params, 'code_challenge');
    const method = stringParam(ctx.params, 'code_challenge_method');
    if (ctx.responseType !== 'code') return;
    if (challenge === undefined) {
      if (method !== undefined) throw new InvalidRequestError('code_challenge', 'code_challenge_method was given without a code_challenge');
      return;
    }
    if (!isPkceValue(challenge)) throw new InvalidRequestError('code_challenge', 'The code_challenge must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~] (RFC 7636)');
    if (!ctx.pkceAllowPlain && method !== 'S256') {
      throw new InvalidRequestError('code_challenge_method', 'Code challenge method must be `S256`; `plain` is not accepted by this server (RFC 9700 §2.1.1)');
    }
    if (method !== undefined && method !== 'S256' && method !== 'plain') throw new InvalidRequestError('code_challenge_method', 'Code challenge method must be `S256` or `plain`');
    ctx.codeChallenge = challenge;
    ctx.codeChallengeMethod = method ?? 'plain';
  },
};
