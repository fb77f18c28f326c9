import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { authorizeErrorPage, consentPage } from '../../web/pages/consent.pages.js';
import { runChecks, type Check } from '../checks/check.js';
import { clientRegistered } from '../checks/client-registered.js';
import { pkceChallengeValid } from '../checks/pkce-challenge-valid.js';
import { pkceRequiredForPublicClients } from '../checks/pkce-required-for-public-clients.js';
import { redirectUriRegistered } from '../checks/redirect-uri-registered.js';
import { responseTypeSupported } from '../checks/response-type-supported.js';
import { authorizeScopesKnown } from '../checks/scopes-known.js';
import { stateWellFormed } from '../checks/state-well-formed.js';
import { required, type AuthorizeContext } from '../context.js';
import { AccessDeniedError, AuthorizePageError, OAuthError } from '../errors.js';
import { grantedScopes, insertCode } from '../oauth.repository.js';
import { stringParam, type Params } from '../params.js';
import { pageTranslator } from '../../web/i18n.js';

/**
 * Order is the contract (RFC 6749 §4.1.2.1): client and redirect_uri first — their failures are a
 * page and never a redirect; then `state`, so every later error redirect carries it back.
 */
export const AUTHORIZE_CHECKS: readonly Check<AuthorizeContext>[] = [
  clientRegistered,
  redirectUriRegistered,
  stateWellFormed,
  responseTypeSupported,
  authorizeScopesKnown,
  pkceChallengeValid,
  pkceRequiredForPublicClients,
];

function newContext(request: FastifyRequest, params: Params): AuthorizeContext {
  const { db, config } = request.server.ctx;
  return { params: params ?? {}, db, pkceAllowPlain: config.pkceAllowPlain, redirectUriGiven: false, scopes: [], codeChallenge: null, codeChallengeMethod: null };
}

/** Appends parameters to the client's redirect URI, keeping its own query (RFC 6749 §3.1.2). */
function clientRedirect(base: string, values: Record<string, string | number | undefined>, inFragment: boolean): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined) params.set(key, String(value));
  if (inFragment) return `${base}#${params}`;
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${params}`;
}

/** Errors before the redirect_uri is trusted are a 400 page; afterwards they go back to the client. */
function fail(reply: FastifyReply, ctx: AuthorizeContext, err: unknown, status: 302 | 303): FastifyReply {
  if (err instanceof AuthorizePageError || (err instanceof OAuthError && ctx.redirectUri === undefined)) {
    return reply.status(400).type('text/html; charset=utf-8').send(authorizeErrorPage(err instanceof AuthorizePageError ? err.detail : err.message, pageTranslator(reply.request)));
  }
  if (!(err instanceof OAuthError)) throw err;
  const location = clientRedirect(
    ctx.redirectUri!,
    { error: err.error, error_description: err.description, hint: err.hint, state: ctx.state },
    ctx.responseType === 'token', // RFC 6749 §4.2.2.1: implicit errors travel in the fragment
  );
  return reply.redirect(location, status);
}

/** The user agreed (now or earlier): a code, or for the implicit grant a token in the fragment. */
async function approve(request: FastifyRequest, reply: FastifyReply, ctx: AuthorizeContext, user: UserRow, status: 302 | 303): Promise<FastifyReply> {
  const { db, tokens } = request.server.ctx;
  const client = required(ctx.client, 'client');
  const redirectUri = required(ctx.redirectUri, 'redirectUri');
  if (ctx.responseType === 'code') {
    const code = await insertCode(db, {
      clientId: client.id,
      userId: user.id,
      redirectUri,
      redirectUriGiven: ctx.redirectUriGiven,
      scopes: ctx.scopes,
      codeChallenge: ctx.codeChallenge,
      codeChallengeMethod: ctx.codeChallengeMethod,
    });
    return reply.redirect(clientRedirect(redirectUri, { code, state: ctx.state }, false), status);
  }
  // RFC 6749 §4.2.2: no refresh token for the implicit grant (compatibility.md §4).
  const issued = await db.transaction().execute(async (tx) => {
    const grantId = await tokens.createGrant(tx, { clientId: client.id, userId: user.id, scopes: ctx.scopes, kind: 'implicit' });
    return tokens.issue(tx, { grantId, clientId: client.id, userId: user.id, scopes: ctx.scopes }, false);
  });
  reply.header('cache-control', 'no-store');
  return reply.redirect(clientRedirect(redirectUri, { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, state: ctx.state }, true), status);
}

/** The validated request, as hidden fields of the consent form (re-validated on POST, never trusted). */
function requestFields(ctx: AuthorizeContext): Record<string, string> {
  const fields: Record<string, string> = { response_type: ctx.responseType!, client_id: String(ctx.client!.id) };
  if (ctx.redirectUriGiven) fields.redirect_uri = ctx.redirectUri!;
  if (ctx.scopes.length) fields.scope = ctx.scopes.join(' ');
  if (ctx.state !== undefined) fields.state = ctx.state;
  if (ctx.codeChallenge !== null) {
    fields.code_challenge = ctx.codeChallenge;
    fields.code_challenge_method = ctx.codeChallengeMethod!;
  }
  return fields;
}

const loginRedirect = (next: string) => `/login?next=${encodeURIComponent(next)}`;

/** GET /oauth/authorize (RFC 6749 §4.1.1, §4.2.1). */
export async function authorizeGet(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const ctx = newContext(request, request.query as Params);
  try {
    await runChecks(AUTHORIZE_CHECKS, ctx);
  } catch (err) {
    return fail(reply, ctx, err, 302);
  }
  const user = request.sessionUser;
  if (!user) return reply.redirect(loginRedirect(request.url), 302);
  if (!user.is_active) return fail(reply, ctx, new AccessDeniedError('This account is deactivated'), 302);

  // A client already granted these scopes (or more) in a live grant skips the consent page.
  const granted = await grantedScopes(request.server.ctx.db, user.id, ctx.client!.id);
  if (granted && ctx.scopes.every((s) => granted.includes(s))) return approve(request, reply, ctx, user, 302);

  const csrf = reply.generateCsrf();
  // Never framed (clickjacking, RFC 6749 §10.13): the full base policy applies, with
  // `frame-ancestors 'none'` and X-Frame-Options DENY (security-headers.ts). Never cached.
  return reply
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(consentPage({ user, csrf, clientName: ctx.client!.name, clientId: ctx.client!.id, redirectUri: ctx.redirectUri!, scopes: ctx.scopes, fields: requestFields(ctx) }, pageTranslator(request)));
}

/** POST /oauth/authorize: the consent form (CSRF-checked by the route's preHandler). */
export async function authorizePost(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const params = (request.body ?? {}) as Params;
  const ctx = newContext(request, params);
  try {
    await runChecks(AUTHORIZE_CHECKS, ctx);
  } catch (err) {
    return fail(reply, ctx, err, 303);
  }
  const user = request.sessionUser;
  if (!user) return reply.redirect(loginRedirect(`/oauth/authorize?${new URLSearchParams(requestFields(ctx))}`), 303);
  if (!user.is_active) return fail(reply, ctx, new AccessDeniedError('This account is deactivated'), 303);
  let decision: string | undefined;
  try {
    decision = stringParam(params, 'decision');
  } catch (err) {
    return fail(reply, ctx, err, 303);
  }
  if (decision !== 'allow') return fail(reply, ctx, new AccessDeniedError(), 303);
  return approve(request, reply, ctx, user, 303);
}
