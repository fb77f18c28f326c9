import { required, type AuthorizeContext } from '../context.js';
import { InvalidRequestError } from '../errors.js';
import type { Check } from './check.js';

/** RFC 9700 §2.1.1: public clients must use PKCE; a code without it could be redeemed by anyone. */
export const pkceRequiredForPublicClients: Check<AuthorizeContext> = {
  name: 'pkce-required-for-public-clients',
  run(ctx) {
    if (ctx.responseType === 'code' && required(ctx.client, 'client').isPublic && ctx.codeChallenge === null) {
      throw new InvalidRequestError('code_challenge', 'Code challenge must be provided for public clients');
    }
  },
};
