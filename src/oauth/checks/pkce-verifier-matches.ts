import { required, type TokenContext } from '../context.js';
import { InvalidGrantError, InvalidRequestError } from '../errors.js';
import { stringParam } from '../params.js';
import { isPkceValue, pkceMatches } from '../pkce.js';
import type { Check } from './check.js';

/**
 * RFC 7636 §4.6. A failed verification leaves the code unused (the attacker, not the client, sent
 * the wrong verifier). RFC 9700 §2.1.1: a code_verifier for a code issued without a challenge is
 * refused, closing the PKCE downgrade.
 */
export const pkceVerifierMatches: Check<TokenContext> = {
  name: 'pkce-verifier-matches',
  run(ctx) {
    const code = required(ctx.code, 'code');
    const verifier = stringParam(ctx.params, 'code_verifier');
    if (code.code_challenge === null || code.code_challenge_method === null) {
      if (verifier !== undefined) throw new InvalidGrantError('A code_verifier was sent but the authorization request had no code_challenge');
      return;
    }
    if (verifier === undefined) throw new InvalidRequestError('code_verifier');
    if (!isPkceValue(verifier)) throw new InvalidRequestError('code_verifier', 'Code verifier must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~] (RFC 7636)');
    if (!pkceMatches(code.code_challenge_method, code.code_challenge, verifier)) throw new InvalidGrantError('Failed to verify `code_verifier`.');
  },
};
