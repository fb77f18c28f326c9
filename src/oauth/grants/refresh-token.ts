import { refreshTokenUsable } from '../checks/refresh-token-usable.js';
import { resourceOwnerActive } from '../checks/resource-owner-active.js';
import { scopeNotWidened } from '../checks/scope-not-widened.js';
import { tokenScopesKnown } from '../checks/scopes-known.js';
import { required } from '../context.js';
import { InvalidGrantError } from '../errors.js';
import { claimRefreshToken } from '../oauth.repository.js';
import type { Grant } from './grant.js';

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): each use marks the token used and issues a new
 * pair under the same grant. Absent `scope` keeps the originally granted scopes (compatibility.md §4).
 * Earlier access tokens stay valid until they expire: clients running several workers refresh
 * from one while others still use the old token, and a 401 there would push them into reuse.
 */
export const refreshTokenGrant: Grant = {
  type: 'refresh_token',
  checks: [refreshTokenUsable, tokenScopesKnown, scopeNotWidened, resourceOwnerActive],
  async issue(ctx) {
    const refresh = required(ctx.refresh, 'refresh');
    const scopes = ctx.requestedScopes ?? refresh.grantScopes;
    const issued = await ctx.db.transaction().execute(async (tx) => {
      if (!(await claimRefreshToken(tx, refresh.tokenHash, ctx.now))) return null;
      return ctx.tokens.issue(tx, { grantId: refresh.grantId, clientId: refresh.clientId, userId: refresh.userId, scopes }, true);
    });
    if (issued) return issued;
    await ctx.tokens.revokeGrantsNow([refresh.grantId]);
    throw new InvalidGrantError('Token has been revoked');
  },
};
