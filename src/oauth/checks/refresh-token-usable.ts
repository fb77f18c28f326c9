import { required, type TokenContext } from '../context.js';
import { InvalidGrantError } from '../errors.js';
import { findRefreshToken } from '../oauth.repository.js';
import { requiredParam } from '../params.js';
import type { Check } from './check.js';

/**
 * The refresh token exists, belongs to this client, and is live. Presenting one that was already
 * rotated is reuse: the whole grant is revoked (RFC 9700 §4.14.2, architecture.md convention 5).
 */
export const refreshTokenUsable: Check<TokenContext> = {
  name: 'refresh-token-usable',
  async run(ctx) {
    const client = required(ctx.client, 'client');
    const refresh = await findRefreshToken(ctx.db, requiredParam(ctx.params, 'refresh_token'));
    if (!refresh) throw new InvalidGrantError('The refresh token is invalid.');
    if (refresh.clientId !== client.id) throw new InvalidGrantError('Token is not linked to client');
    if (refresh.grantRevokedAt !== null || refresh.revokedAt !== null) throw new InvalidGrantError('Token has been revoked');
    if (refresh.usedAt !== null) {
      await ctx.tokens.revokeGrantsNow([refresh.grantId]);
      throw new InvalidGrantError('Token has been revoked');
    }
    if (refresh.expiresAt <= ctx.now) throw new InvalidGrantError('Token has expired');
    ctx.refresh = refresh;
  },
};
