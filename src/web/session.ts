import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { endSession, SESSION_TTL_MS, sessionUser, startSession } from '../modules/accounts/accounts.service.js';
import { sha256Hex } from '../security/crypto.js';

export interface CookieNames {
  session: string;
  csrf: string;
  /** PUBLIC_URL is https: cookies are `Secure` and `__Host-` prefixed. */
  secure: boolean;
}

/**
 * `__Host-` cookies (RFC 6265bis §4.1.3.2) are accepted by browsers only when Secure, Path=/ and
 * without Domain, so a sibling subdomain cannot plant or overwrite them. They need https, so a
 * plain-http install (a LAN, a developer machine) keeps unprefixed names.
 */
export function cookieNames(config: Pick<Config, 'publicUrl'>): CookieNames {
  const secure = config.publicUrl.startsWith('https:');
  return secure ? { session: '__Host-oa_session', csrf: '__Host-oa_csrf', secure } : { session: 'oa_session', csrf: 'oa_csrf', secure };
}

function cookieOptions(names: CookieNames) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: names.secure };
}

/** The session token of this browser (the session cookie), if it sent one. */
export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[cookieNames(request.server.ctx.config).session];
}

/**
 * What a CSRF token is bound to: the browser's session, or its anonymous state before log-in. A
 * token minted for one of them is refused for any other, so a token taken from a logged-out page
 * (or from another session, or planted with an attacker's own CSRF cookie) cannot post as this
 * session; logging in or out therefore invalidates every token minted before.
 */
function csrfBinding(request: FastifyRequest): string {
  const token = sessionToken(request);
  return token ? `session:${sha256Hex(token)}` : 'anonymous';
}

/**
 * Browser sessions for the plugin that calls it (pages, the OAuth consent routes); the API and
 * widgets never read cookies. It adds, to that plugin only:
 * - cookies (@fastify/cookie, signed with the app's cookie key);
 * - CSRF (@fastify/csrf-protection): a secret in a signed cookie, tokens HMAC-bound to the session
 *   (see csrfBinding); pages call `reply.generateCsrf()` and guard posts with `app.csrfProtection`;
 * - `request.sessionUser`: the logged-in streamer, resolved before the route's own preHandlers.
 */
export async function registerBrowserSession(app: FastifyInstance): Promise<void> {
  const names = cookieNames(app.ctx.config);
  await app.register(cookie, { secret: app.ctx.secrets.cookieSecret });
  await app.register(csrf, {
    cookieKey: names.csrf,
    cookieOpts: { ...cookieOptions(names), signed: true },
    getUserInfo: csrfBinding,
    csrfOpts: { hmacKey: sha256Hex(`csrf-token:${app.ctx.secrets.cookieSecret}`), userInfo: true },
  });
  app.decorateRequest('sessionUser', null);
  app.addHook('onRequest', async (request, reply) => {
    // Pages call `reply.generateCsrf()` without arguments; the token must carry the binding.
    const mint = reply.generateCsrf;
    reply.generateCsrf = (options) => mint.call(reply, { ...options, userInfo: csrfBinding(request) });
  });
  app.addHook('preHandler', async (request) => {
    const token = sessionToken(request);
    if (token) request.sessionUser = (await sessionUser(app.ctx.db, token)) ?? null;
  });
}

/**
 * Starts a session and drops the CSRF secret, so the next page mints a fresh one. Answer with a
 * redirect: tokens minted later in this same request would still be bound to the old state.
 */
export async function logIn(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  const names = cookieNames(app.ctx.config);
  const token = await startSession(app.ctx.db, userId);
  reply.setCookie(names.session, token, { ...cookieOptions(names), maxAge: SESSION_TTL_MS / 1000 });
  reply.clearCookie(names.csrf, cookieOptions(names));
}

export async function logOut(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const names = cookieNames(app.ctx.config);
  await endSession(app.ctx.db, sessionToken(request));
  reply.clearCookie(names.session, cookieOptions(names));
  reply.clearCookie(names.csrf, cookieOptions(names));
}

/** Removed by the WHATWG URL parser wherever they occur, so they must not hide a `//` from us. */
const TAB_OR_NEWLINE = /[\t\n\r]/g;
/** A path on this host: `/` then anything but `/` or `\` (either would start a network path). */
const LOCAL_PATH = /^\/[^/\\]/;
/**
 * Stands for PUBLIC_URL's origin: only a path-absolute reference resolves onto it, and the result
 * is the same for any base (a PUBLIC_URL path prefix included), so pages need not pass config.
 */
const OUR_ORIGIN = 'https://openalerts.invalid';

/**
 * Where to send a user after log-in: `next` when it is a path on this site, else `fallback`. The
 * value is read the way a browser reads a Location header — tab/CR/LF removed, then resolved as a
 * URL against our origin — and is accepted only when it stays on that origin with a local path,
 * both before and after resolving (`/a/..//evil` resolves to `//evil`). The answer is the parsed
 * URL's serialization, so no raw control character ever reaches the Location header.
 */
export function safeNext(next: unknown, fallback = '/dashboard'): string {
  if (typeof next !== 'string') return fallback;
  const cleaned = next.replace(TAB_OR_NEWLINE, '');
  if (!LOCAL_PATH.test(cleaned)) return fallback;
  let url: URL;
  try {
    url = new URL(cleaned, OUR_ORIGIN);
  } catch {
    return fallback;
  }
  if (url.origin !== OUR_ORIGIN || !LOCAL_PATH.test(url.pathname)) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** preHandler for pages that need a logged-in user: sends others to the log-in page and back. */
export async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!request.sessionUser) {
    await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
  }
}
