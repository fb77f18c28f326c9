import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSession, SESSION_TTL_MS, sessionUser, startSession } from '../modules/accounts/accounts.service.js';

export const SESSION_COOKIE = 'oa_session';

function cookieOptions(app: FastifyInstance) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: app.ctx.config.publicUrl.startsWith('https:'),
  };
}

/** Resolves the session cookie to a user for page routes; API routes never look at cookies. */
export function registerSessions(app: FastifyInstance): void {
  app.decorateRequest('sessionUser', null);
  app.addHook('preHandler', async (request) => {
    if (request.url.startsWith('/api/') || request.url.startsWith('/oauth/token') || request.url.startsWith('/connection/')) return;
    const token = request.cookies[SESSION_COOKIE];
    if (token) request.sessionUser = (await sessionUser(app.ctx.db, token)) ?? null;
  });
}

export async function logIn(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  const token = await startSession(app.ctx.db, userId);
  reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(app), maxAge: SESSION_TTL_MS / 1000 });
}

export async function logOut(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await endSession(app.ctx.db, request.cookies[SESSION_COOKIE]);
  reply.clearCookie(SESSION_COOKIE, cookieOptions(app));
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
