import type { FastifyReply, FastifyRequest } from 'fastify';
import { runChecks, type Check } from '../checks/check.js';
import { clientAuthenticated } from '../checks/client-authenticated.js';
import { paramsAreAnObject } from '../checks/params-are-an-object.js';
import { tokenPresent } from '../checks/token-present.js';
import { clientRequestContext, required, type RevokeContext } from '../context.js';
import { findAccessToken, findRefreshToken } from '../oauth.repository.js';

export const REVOKE_CHECKS: readonly Check<RevokeContext>[] = [paramsAreAnObject, clientAuthenticated, tokenPresent];

type Kind = 'access_token' | 'refresh_token';

/** True when the token was found and belonged to this client (and is now revoked). */
async function revokeAs(ctx: RevokeContext, kind: Kind, token: string, clientId: number): Promise<boolean> {
  if (kind === 'access_token') {
    const row = await findAccessToken(ctx.db, token);
    if (!row || row.client_id !== clientId) return false;
    await ctx.tokens.revokeAccessToken(ctx.db, token);
    return true;
  }
  const refresh = await findRefreshToken(ctx.db, token);
  if (!refresh || refresh.clientId !== clientId) return false;
  // RFC 7009 §2.1: revoking a refresh token also invalidates the access tokens of the same grant.
  await ctx.tokens.revokeGrantsNow([refresh.grantId]);
  return true;
}

/**
 * POST /oauth/revoke (RFC 7009). The hint only chooses which kind is looked up first. An unknown
 * token, or another client's, answers 200 like a revoked one (§2.2): nothing leaks about tokens the
 * caller does not own.
 */
export async function revokeAction(request: FastifyRequest, reply: FastifyReply): Promise<Record<string, never>> {
  const ctx: RevokeContext = clientRequestContext(request);
  await runChecks(REVOKE_CHECKS, ctx);
  const clientId = required(ctx.client, 'client').id;
  const token = required(ctx.token, 'token');
  const order: Kind[] = ctx.tokenTypeHint === 'refresh_token' ? ['refresh_token', 'access_token'] : ['access_token', 'refresh_token'];
  for (const kind of order) if (await revokeAs(ctx, kind, token, clientId)) break;
  reply.header('cache-control', 'no-store');
  return {};
}
