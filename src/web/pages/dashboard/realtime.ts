import type { FastifyInstance } from 'fastify';
import { sendJsonError } from '../../../http/error-handler.js';
import { userChannels } from '../../../modules/realtime-tokens/channel-access.js';
import { html } from '../../html.js';

/**
 * Live dashboard pages connect to our own WebSocket endpoint with centrifuge-js 5 (modern
 * protocol, compatibility.md §5: channel tokens are bound to the user through `sub`, not to a client id).
 * Tokens embedded in a page live briefly; the page renews them through POST /dashboard/realtime-token,
 * which needs the session — so a logged-out streamer stops receiving within the TTL. A deactivated
 * one is disconnected at once (realtime-tokens: the tokens are checked against the account).
 */
export const DASHBOARD_TOKEN_TTL_SECONDS = 300;

/** centrifuge.js (loaded before dashboard.js: both are deferred, so they run in this order). */
export const REALTIME_HEAD = html`<script src="/static/vendor/centrifuge.js" defer></script>`;

export interface RealtimeConfig {
  token: string;
  tokenUrl: string;
  channels: { channel: string; token: string }[];
}

/** What a live page embeds for dashboard.js: a connection token and one token per channel. */
export async function realtimeConfig(app: FastifyInstance, userId: number, channels: string[]): Promise<RealtimeConfig> {
  const tokens = app.ctx.realtimeTokens;
  return {
    token: await tokens.connectionForUser(userId, DASHBOARD_TOKEN_TTL_SECONDS),
    tokenUrl: '/dashboard/realtime-token',
    channels: await Promise.all(channels.map(async (channel) => ({ channel, token: await tokens.channelForUser(userId, channel, DASHBOARD_TOKEN_TTL_SECONDS) }))),
  };
}

/**
 * POST /dashboard/realtime-token — `{}` → a connection token; `{"channel": "<one of the user's
 * channels>"}` → a channel token. Session and `x-csrf-token` required; JSON answers only
 * (401 when logged out or deactivated, 403 for someone else's channel or a bad CSRF token).
 */
export async function realtimeTokenRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/dashboard/realtime-token',
    {
      preHandler: [
        async (request, reply) => {
          if (!request.sessionUser) return sendJsonError(reply, 401, { message: 'Unauthenticated.' });
        },
        app.csrfProtection,
      ],
    },
    async (request, reply) => {
      const user = request.sessionUser!;
      const channel = (request.body as { channel?: unknown } | undefined)?.channel;
      const tokens = app.ctx.realtimeTokens;
      if (channel === undefined || channel === null || channel === '') {
        return reply.header('cache-control', 'no-store').send({ token: await tokens.connectionForUser(user.id, DASHBOARD_TOKEN_TTL_SECONDS) });
      }
      if (typeof channel !== 'string' || !userChannels(user.id).includes(channel)) {
        return sendJsonError(reply, 403, { message: 'This channel is not yours.' });
      }
      return reply.header('cache-control', 'no-store').send({ token: await tokens.channelForUser(user.id, channel, DASHBOARD_TOKEN_TTL_SECONDS) });
    },
  );
}
