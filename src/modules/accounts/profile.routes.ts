import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiErrorResponses, needsScope } from '../../api/schemas.js';
import { UnauthenticatedError } from '../../domain/errors.js';
import { requireToken } from '../../oauth/bearer.js';
import { toProfileResource } from './accounts.resource.js';
import { userById } from './accounts.service.js';
import { ProfileResponse } from './profile.schemas.js';

const SCOPE = 'oauth-user-show';

/**
 * Lifetime of `socket_connection_token`. Clients fetch the profile once and reconnect with the same
 * token for as long as they run (an expired one is refused at connect, code 109), so it is long,
 * but never outlives the access token that obtained it.
 */
export const SOCKET_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** Spec 4.1: GET /user/oauth. */
export const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/user/oauth',
    {
      schema: {
        summary: 'The authorized user’s profile',
        description: 'Includes `socket_connection_token`, which authorizes the real-time WebSocket connection.',
        tags: ['User'],
        security: needsScope(SCOPE),
        response: { 200: { ...ProfileResponse, description: 'The authorized user: `{data: <user profile>}`.' }, ...apiErrorResponses(SCOPE) },
      },
      onRequest: requireToken(SCOPE),
    },
    async (request) => {
      const auth = request.auth!;
      const user = await userById(app.ctx.db, auth.userId!);
      if (!user || !user.is_active) throw new UnauthenticatedError('invalid_token');
      const ttl = Math.max(1, Math.min(SOCKET_TOKEN_TTL_SECONDS, Math.floor((auth.expiresAt - Date.now()) / 1000)));
      const token = await app.ctx.realtimeTokens.connectionForGrant(auth, ttl);
      return { data: toProfileResource(user, app.ctx.config.publicUrl, token) };
    },
  );
};
