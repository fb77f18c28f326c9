import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { apiErrorResponses, bodyTooLarge, MessageBody } from '../api/schemas.js';
import { requireToken } from '../oauth/bearer.js';

/** Channel tokens outlive a reconnect (centrifuge-js 5 reuses them) but not a day. */
export const CHANNEL_TOKEN_TTL_SECONDS = 24 * 3600;

const SubscribeBody = Type.Object({
  channels: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 64, description: 'Private channel names (starting with `$`).' }),
  client: Type.String({ format: 'uuid', description: 'Client id from the real-time connect reply.' }),
});

const SubscribeReply = Type.Object({
  channels: Type.Array(Type.Object({ channel: Type.String(), token: Type.String() })),
});

/**
 * Spec 4.9 / 5.6: signs private-channel subscriptions (realtime-tokens `channelsForGrant` decides:
 * each channel the token user's own and its scope granted, else 403 naming it). The tokens carry
 * the grant: revoking it closes the sockets subscribed with them.
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
      const { channels, client } = request.body;
      return { channels: await app.ctx.realtimeTokens.channelsForGrant(request.auth!, channels, client, CHANNEL_TOKEN_TTL_SECONDS) };
    },
  );
};
