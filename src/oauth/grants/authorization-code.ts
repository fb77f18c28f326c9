import { codeUsable } from '../checks/code-usable.js';
import { pkceVerifierMatches } from '../checks/pkce-verifier-matches.js';
import { redirectUriMatchesCode } from '../checks/redirect-uri-matches-code.js';
import { resourceOwnerActive } from '../checks/resource-owner-active.js';
import { required } from '../context.js';
import { InvalidGrantError } from '../errors.js';
import { claimCode, findCode, setCodeGrant, splitScopes } from '../oauth.repository.js';
import { requiredParam } from '../params.js';
import type { Grant } from './grant.js';

/**
 * RFC 6749 §4.1.3. The code is claimed, the grant created and the tokens issued in one
 * transaction. Losing the claim to a concurrent exchange is a replay like any other: the winner's
 * grant is revoked.
 */
export const authorizationCodeGrant: Grant = {
  type: 'authorization_code',
  checks: [codeUsable, redirectUriMatchesCode, pkceVerifierMatches, resourceOwnerActive],
  async issue(ctx) {
    const code = required(ctx.code, 'code');
    const issued = await ctx.db.transaction().execute(async (tx) => {
      if (!(await claimCode(tx, code.code_hash, ctx.now))) return null;
      const scopes = splitScopes(code.scopes);
      const grantId = await ctx.tokens.createGrant(tx, { clientId: code.client_id, userId: code.user_id, scopes, kind: 'authorization_code' });
      await setCodeGrant(tx, code.code_hash, grantId);
      return ctx.tokens.issue(tx, { grantId, clientId: code.client_id, userId: code.user_id, scopes }, true);
    });
    if (issued) return issued;
    const winner = await findCode(ctx.db, requiredParam(ctx.params, 'code'));
    if (winner?.grant_id != null) await ctx.tokens.revokeGrantsNow([winner.grant_id]);
    throw new InvalidGrantError('Authorization code has been revoked');
  },
};
