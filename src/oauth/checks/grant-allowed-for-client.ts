import { required, type TokenContext } from '../context.js';
import { UnauthorizedClientError } from '../errors.js';
import type { Check } from './check.js';

/** RFC 6749 §4.4: client_credentials only for clients that can keep their secret. */
export const grantAllowedForClient: Check<TokenContext> = {
  name: 'grant-allowed-for-client',
  run(ctx) {
    if (ctx.grantType === 'client_credentials' && required(ctx.client, 'client').isPublic) {
      throw new UnauthorizedClientError('Public clients cannot use the client_credentials grant');
    }
  },
};
