import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowCrossOrigin } from '../api/cors.js';
import { BODY_MEDIA_TYPES, documentationOnly, MessageBody } from '../api/schemas.js';
import { alwaysJson, errorHandler, htmlUnlessJsonAsked } from '../http/error-handler.js';
import { localizedErrorPage, registerPageLanguage } from '../web/i18n.js';
import { registerBrowserSession } from '../web/session.js';
import { authorizeGet, authorizePost } from './actions/authorize.js';
import { metadataAction } from './actions/metadata.js';
import { revokeAction } from './actions/revoke.js';
import { tokenAction } from './actions/token.js';
import { InvalidClientError, OAuthError, ServerError } from './errors.js';
import {
  AuthorizeQuery,
  AuthorizeResponses,
  clientAuthentication,
  ConsentForm,
  ConsentResponses,
  MetadataReply,
  OAuthJsonErrors,
  RevokeBody,
  RevokeReply,
  TokenBody,
  TokenReply,
} from './oauth.schemas.js';

const TAGS = ['OAuth 2.0'];

/**
 * Errors of the token and revocation endpoints, always in the league/Passport JSON shape (compatibility.md
 * §4) — including what fails before the handler runs (unparsable body, 413, 415), which keeps its
 * HTTP status but reads as invalid_request.
 */
function oauthJsonErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json');
  if (error instanceof OAuthError) {
    if (error instanceof InvalidClientError && error.usedBasic) reply.header('www-authenticate', 'Basic realm="OAuth"');
    return reply.status(error.status).send(error.toJSON());
  }
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) {
    const description =
      status === 413
        ? `The request body is too large; the limit is ${request.server.initialConfig.bodyLimit} bytes.`
        : status === 415
          ? 'Unsupported Content-Type; send application/x-www-form-urlencoded, multipart/form-data or application/json.'
          : 'The request body could not be parsed.';
    return reply.status(status).send({ error: 'invalid_request', error_description: description, hint: error.message, message: description });
  }
  request.log.error({ err: error }, 'oauth request failed');
  return reply.status(500).send(new ServerError().toJSON());
}

/**
 * The authorization server: RFC 6749 endpoints, RFC 7009 revocation, RFC 8414 metadata. Schemas
 * document only (`documentationOnly`): the checks validate, in the RFC 6749 shapes.
 *
 * Two kinds of routes, each plugin owning its hooks:
 * - the authorization endpoint is a page: the user's browser session, CSRF on the consent form,
 *   HTML errors, no CORS;
 * - the token, revocation and metadata endpoints are called by applications, browser ones
 *   included (compatibility.md §1): CORS, JSON errors, no cookies. Each has a plugin prefixed with its own
 *   path, so CORS preflights are answered for exactly these paths.
 */
export async function oauthRoutes(app: FastifyInstance): Promise<void> {
  await app.register(authorizationEndpoint);
  await app.register(tokenEndpoint, { prefix: '/oauth/token' });
  await app.register(revocationEndpoint, { prefix: '/oauth/revoke' });
  await app.register(metadataEndpoint, { prefix: '/.well-known/oauth-authorization-server' });
}

async function authorizationEndpoint(app: FastifyInstance): Promise<void> {
  await registerBrowserSession(app);
  registerPageLanguage(app);
  app.setErrorHandler(errorHandler(htmlUnlessJsonAsked, localizedErrorPage));
  app.get(
    '/oauth/authorize',
    {
      ...documentationOnly,
      schema: {
        tags: TAGS,
        summary: 'Authorization request (RFC 6749 §4.1.1, §4.2.1)',
        description:
          'Open in the user’s browser. Signs the user in if needed, then shows the consent page — or, when this application already holds these scopes, answers at once. Uses the user’s session, not a token.',
        security: [],
        querystring: AuthorizeQuery,
        response: AuthorizeResponses,
      },
    },
    authorizeGet,
  );
  app.post(
    '/oauth/authorize',
    {
      ...documentationOnly,
      schema: {
        tags: TAGS,
        summary: 'Consent decision',
        description: 'Posted by the consent page (session cookie and CSRF token); the request is validated again, never trusted.',
        security: [],
        consumes: ['application/x-www-form-urlencoded'],
        body: ConsentForm,
        response: ConsentResponses,
      },
      preHandler: app.csrfProtection,
    },
    authorizePost,
  );
}

async function tokenEndpoint(app: FastifyInstance): Promise<void> {
  await allowCrossOrigin(app);
  app.post(
    '',
    {
      ...documentationOnly,
      schema: {
        tags: TAGS,
        summary: 'Token endpoint (RFC 6749 §3.2)',
        description:
          'Grants `authorization_code` (with PKCE when the authorization request had a challenge), `refresh_token` (rotates the refresh token) and `client_credentials` (a token of the application itself, no user — enough for the Merchandise API). Answers with `Cache-Control: no-store`.',
        security: clientAuthentication,
        consumes: BODY_MEDIA_TYPES,
        body: TokenBody,
        response: { 200: { ...TokenReply, description: 'Issued.' }, ...OAuthJsonErrors },
      },
      errorHandler: oauthJsonErrorHandler,
    },
    tokenAction,
  );
}

async function revocationEndpoint(app: FastifyInstance): Promise<void> {
  await allowCrossOrigin(app);
  app.post(
    '',
    {
      ...documentationOnly,
      schema: {
        tags: TAGS,
        summary: 'Token revocation (RFC 7009)',
        description: 'Revokes an access or refresh token of the calling client.',
        security: clientAuthentication,
        consumes: BODY_MEDIA_TYPES,
        body: RevokeBody,
        response: { 200: RevokeReply, ...OAuthJsonErrors },
      },
      errorHandler: oauthJsonErrorHandler,
    },
    revokeAction,
  );
}

async function metadataEndpoint(app: FastifyInstance): Promise<void> {
  await allowCrossOrigin(app);
  app.setErrorHandler(errorHandler(alwaysJson));
  app.get(
    '',
    {
      ...documentationOnly,
      schema: {
        tags: TAGS,
        summary: 'Authorization server metadata (RFC 8414)',
        security: [],
        response: { 200: MetadataReply, 500: { ...MessageBody, description: '`{"message":"Server Error."}`.' } },
      },
    },
    metadataAction,
  );
}
