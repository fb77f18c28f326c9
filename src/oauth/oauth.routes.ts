import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizeGet, authorizePost } from './actions/authorize.js';
import { metadataAction } from './actions/metadata.js';
import { revokeAction } from './actions/revoke.js';
import { tokenAction } from './actions/token.js';
import { InvalidClientError, OAuthError, ServerError } from './errors.js';

/**
 * Errors of the token and revocation endpoints, always in the league/Passport JSON shape (INTEROP
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

/** The authorization server: RFC 6749 endpoints, RFC 7009 revocation, RFC 8414 metadata. */
export async function oauthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/oauth/authorize', authorizeGet);
  app.post('/oauth/authorize', { preHandler: app.csrfProtection }, authorizePost);
  app.post('/oauth/token', { errorHandler: oauthJsonErrorHandler }, tokenAction);
  app.post('/oauth/revoke', { errorHandler: oauthJsonErrorHandler }, revokeAction);
  app.get('/.well-known/oauth-authorization-server', metadataAction);
}
