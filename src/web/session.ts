import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { endSession, SESSION_TTL_MS, sessionUser, startSession } from '../modules/accounts/accounts.service.js';

export interface CookieNames {
  session: string;
  csrf: string;
  /** PUBLIC_URL is https: cookies are `Secure`. */
  secure: boolean;
}

/** Cookie names; the session and CSRF cookies are Secure when PUBLIC_URL is https. */
export function cookieNames(config: Pick<Config, 'publicUrl'>): CookieNames {
  return { session: 'oa_session', csrf: '_csrf', secure: config.publicUrl.startsWith('https:') };
}

function cookieOptions(names: CookieNames) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: names.secure };
}

/** The session token of this browser (the session cookie), if it sent one. */
export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[cookieNames(request.server.ctx.config).session];
}

/**
 * Browser sessions for the plugin that calls it (pages, the OAuth consent routes); the API and
 * widgets never read cookies. It adds, to that plugin only:
 * - cookies (@fastify/cookie, signed with the app's cookie key);
 * - CSRF (@fastify/csrf-protection): a secret in a signed cookie; pages call `reply.generateCsrf()`
 *   and guard posts with `app.csrfProtection`;
 * - `request.sessionUser`: the logged-in streamer, resolved before the route's own preHandlers.
 */
export async function registerBrowserSession(app: FastifyInstance): Promise<void> {
  const names = cookieNames(app.ctx.config);
  await app.register(cookie, { secret: app.ctx.secrets.cookieSecret });
  await app.register(csrf, {
    cookieKey: names.csrf,
    cookieOpts: { ...cookieOptions(names), signed: true },
  });
  app.decorateRequest('sessionUser', null);
  app.addHook('preHandler', async (request) => {
    const token = sessionToken(request);
    if (token) request.sessionUser = (await sessionUser(app.ctx.db, token)) ?? null;
  });
}

export async function logIn(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  const names = cookieNames(app.ctx.config);
  const token = await startSession(app.ctx.db, userId);
  reply.setCookie(names.session, token, { ...cookieOptions(names), maxAge: SESSION_TTL_MS / 1000 });
}

export async function logOut(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const names = cookieNames(app.ctx.config);
  await endSession(app.ctx.db, sessionToken(request));
  reply.clearCookie(names.session, cookieOptions(names));
}

/** Only same-site relative paths, so `next` can never send a user to another site. */
export function safeNext(next: unknown, fallback = '/dashboard'): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : fallback;
}

/** preHandler for pages that need a logged-in user: sends others to the log-in page and back. */
export async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!request.sessionUser) {
    await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
  }
}
