import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiErrorResponses, bodyTooLarge, MessageBody } from '../api/schemas.js';
import { ForbiddenError, InsufficientScopeError } from '../domain/errors.js';
import { requireToken } from '../oauth/bearer.js';
import { channelAccess } from './channel-access.js';
import { signChannelToken } from './tokens.js';

/** Channel tokens outlive a reconnect (centrifuge-js 5 reuses them) but not a day. */
export const CHANNEL_TOKEN_TTL_SECONDS = 24 * 3600;

const SubscribeBody = Type.Object({
  channels: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 64, description: 'Private channel names (spec 6.2).' }),
  client: Type.String({ format: 'uuid', description: 'Client id from the real-time connect reply.' }),
});

const SubscribeReply = Type.Object({
  channels: Type.Array(Type.Object({ channel: Type.String(), token: Type.String() })),
});

/**
 * Spec 4.9 / 5.6: signs private-channel subscriptions. Each channel must be the token user's own
 * and its scope granted, else 403 naming it. The token carries `client` (checked by the legacy
 * protocol) and `sub` (checked by the modern one), per INTEROP §5.
 */
export const centrifugeSubscribeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/centrifuge/subscribe',
    {
      schema: {
        summary: 'Get connection tokens for private real-time channels',
        description:
          'Channels: `$alerts:donation_<user_id>` (oauth-donation-subscribe), `$goals:goal_<user_id>` (oauth-goal-subscribe), `$polls:poll_<user_id>` (oauth-poll-subscribe). Body is JSON (also accepted as text/plain).',
        tags: ['Real-time'],
        security: [{ oauth2: ['oauth-donation-subscribe'] }, { oauth2: ['oauth-goal-subscribe'] }, { oauth2: ['oauth-poll-subscribe'] }],
        consumes: ['application/json', 'text/plain'],
        body: SubscribeBody,
        response: {
          200: { ...SubscribeReply, description: 'A token per distinct channel, valid for 24 hours.' },
          ...apiErrorResponses('oauth-donation-subscribe'),
          403: {
            ...MessageBody,
            description:
              'A channel is not one of the token user’s, or the token lacks its scope (`WWW-Authenticate: Bearer error="insufficient_scope", scope="<the channel’s scope>"`), or the token has no user (a client-credentials token).',
          },
          ...bodyTooLarge,
        },
      },
      onRequest: requireToken(),
    },
    async (request) => {
      const auth = request.auth!;
      const { channels, client } = request.body;
      const unique = [...new Set(channels)];
      for (const channel of unique) {
        const access = channelAccess(channel);
        if (!access || access.userId !== auth.userId) throw new ForbiddenError(`The channel "${channel}" is not one of this user's channels.`);
        if (!auth.scopes.includes(access.scope)) throw new InsufficientScopeError(access.scope);
      }
      const secret = app.ctx.secrets.realtimeTokenSecret;
      const signed = await Promise.all(
        unique.map(async (channel) => ({ channel, token: await signChannelToken(secret, { channel, client, sub: String(auth.userId), ttlSeconds: CHANNEL_TOKEN_TTL_SECONDS }) })),
      );
      return { channels: signed };
    },
  );
};
