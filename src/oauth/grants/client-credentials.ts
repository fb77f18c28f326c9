import { tokenScopesKnown } from '../checks/scopes-known.js';
import { required } from '../context.js';
import type { Grant } from './grant.js';

/**
 * RFC 6749 §4.4: server-to-server (merchant applications, compatibility.md §3). The token has no user and
 * no refresh token (§4.4.3); the scope may be empty.
 */
export const clientCredentialsGrant: Grant = {
  type: 'client_credentials',
  checks: [tokenScopesKnown],
  async issue(ctx) {
    const client = required(ctx.client, 'client');
    const scopes = ctx.requestedScopes ?? [];
    return ctx.db.transaction().execute(async (tx) => {
      const grantId = await ctx.tokens.createGrant(tx, { clientId: client.id, userId: null, scopes, kind: 'client_credentials' });
      return ctx.tokens.issue(tx, { grantId, clientId: client.id, userId: null, scopes }, false);
    });
  },
};
