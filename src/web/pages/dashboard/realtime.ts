import type { FastifyInstance } from 'fastify';
import { sendJsonError } from '../../../http/error-handler.js';
import { userChannels } from '../../../realtime/channel-access.js';
import { signChannelToken, signConnectionToken } from '../../../realtime/tokens.js';
import { html } from '../../html.js';

/**
 * Live dashboard pages connect to our own WebSocket endpoint with centrifuge-js 5 (modern
 * protocol, INTEROP §5: channel tokens are bound to the user through `sub`, not to a client id).
 * Tokens embedded in a page live briefly; the page renews them through POST /dashboard/realtime-token,
 * which needs the session — so a logged-out or deactivated streamer stops receiving within the TTL.
 */
export const DASHBOARD_TOKEN_TTL_SECONDS = 300;

/** centrifuge.js (loaded before dashboard.js: both are deferred, so they run in this order). */
export const REALTIME_HEAD = html`<script src="/static/vendor/centrifuge.js" defer></script>`;

export interface RealtimeConfig {
  token: string;
  tokenUrl: string;
  channels: { channel: string; token: string }[];
}

async function channelToken(secret: string, userId: number, channel: string): Promise<string> {
  return signChannelToken(secret, { channel, sub: String(userId), ttlSeconds: DASHBOARD_TOKEN_TTL_SECONDS });
}

/** What a live page embeds for dashboard.js: a connection token and one token per channel. */
export async function realtimeConfig(app: FastifyInstance, userId: number, channels: string[]): Promise<RealtimeConfig> {
  const secret = app.ctx.secrets.realtimeTokenSecret;
  return {
    token: await signConnectionToken(secret, userId, DASHBOARD_TOKEN_TTL_SECONDS),
    tokenUrl: '/dashboard/realtime-token',
    channels: await Promise.all(channels.map(async (channel) => ({ channel, token: await channelToken(secret, userId, channel) }))),
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
      const secret = app.ctx.secrets.realtimeTokenSecret;
      if (channel === undefined || channel === null || channel === '') {
        return reply.header('cache-control', 'no-store').send({ token: await signConnectionToken(secret, user.id, DASHBOARD_TOKEN_TTL_SECONDS) });
      }
      if (typeof channel !== 'string' || !userChannels(user.id).includes(channel)) {
        return sendJsonError(reply, 403, { message: 'This channel is not yours.' });
      }
      return reply.header('cache-control', 'no-store').send({ token: await channelToken(secret, user.id, channel) });
    },
  );
}
