import type { FastifyReply, FastifyRequest } from 'fastify';
import { runChecks, type Check } from '../checks/check.js';
import { clientAuthenticated } from '../checks/client-authenticated.js';
import { grantAllowedForClient } from '../checks/grant-allowed-for-client.js';
import { grantTypeSupported, type GrantType } from '../checks/grant-type-supported.js';
import { paramsAreAnObject } from '../checks/params-are-an-object.js';
import { clientRequestContext, required, type TokenContext } from '../context.js';
import { GRANTS } from '../grants/index.js';

/** Order matters: unknown grant types are reported before client authentication (as league/Passport). */
export const TOKEN_CHECKS: readonly Check<TokenContext>[] = [paramsAreAnObject, grantTypeSupported, clientAuthenticated, grantAllowedForClient];

/** compatibility.md §4 success shape, keys in this order; `refresh_token` only when one was issued. */
export interface TokenResponse {
  token_type: 'Bearer';
  expires_in: number;
  access_token: string;
  refresh_token?: string;
}

/** POST /oauth/token (RFC 6749 §3.2). Errors are thrown as OAuthError and shaped by the route's error handler. */
export async function tokenAction(request: FastifyRequest, reply: FastifyReply): Promise<TokenResponse> {
  const ctx: TokenContext = { ...clientRequestContext(request), now: Date.now() };
  await runChecks(TOKEN_CHECKS, ctx);
  const grant = GRANTS[required(ctx.grantType, 'grantType') as GrantType];
  await runChecks(grant.checks, ctx);
  const issued = await grant.issue(ctx);
  // RFC 6749 §5.1: token responses must not be cached.
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  const body: TokenResponse = { token_type: 'Bearer', expires_in: issued.expiresIn, access_token: issued.accessToken };
  if (issued.refreshToken) body.refresh_token = issued.refreshToken;
  return body;
}
