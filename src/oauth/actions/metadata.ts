import type { FastifyRequest } from 'fastify';
import { GRANT_TYPES } from '../checks/grant-type-supported.js';
import { ALL_SCOPES } from '../scopes.js';

/** GET /.well-known/oauth-authorization-server (RFC 8414 §2); absolute URLs from PUBLIC_URL. */
export function metadataAction(request: FastifyRequest) {
  const base = request.server.ctx.config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    revocation_endpoint: `${base}/oauth/revoke`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code', 'token'],
    response_modes_supported: ['query', 'fragment'],
    grant_types_supported: ['authorization_code', 'implicit', ...GRANT_TYPES.filter((g) => g !== 'authorization_code')],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: request.server.ctx.config.pkceAllowPlain ? ['S256', 'plain'] : ['S256'],
    service_documentation: `${base}/docs`,
  };
}
