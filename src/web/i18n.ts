import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HtmlErrorPage } from '../http/error-handler.js';
import { DEFAULT_LOCALE, isLocale, localeOr, type Locale } from '../i18n/locales.js';
import { localeFromAcceptLanguage } from '../i18n/negotiate.js';
import { english, translator, type Translator } from '../i18n/translator.js';
import { serverErrorPage } from './layout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The language of the page being rendered (set by registerPageLanguage; see pageTranslator). */
    i18n: Translator | null;
  }
}

/**
 * The language a visitor chose with a switcher (donor page), kept a year. Not a secret and not
 * tied to the session: a plain cookie, read only as one of the spec's locales.
 */
export const LANG_COOKIE = 'oa_lang';
const LANG_COOKIE_MAX_AGE = 365 * 24 * 3600;

function cookieLocale(request: FastifyRequest): Locale | null {
  // Surfaces without @fastify/cookie (widgets) have no `cookies`: they never read one.
  const value = (request as { cookies?: Record<string, string | undefined> }).cookies?.[LANG_COOKIE];
  return isLocale(value) ? value : null;
}

/** A visitor who is not logged in: the switcher's cookie, else the browser's Accept-Language. */
export function visitorLocale(request: FastifyRequest): Locale {
  return cookieLocale(request) ?? localeFromAcceptLanguage(request.headers['accept-language']);
}

/**
 * The language of a page: the logged-in user's profile setting (dashboard, admin, consent), else
 * the visitor's. A value that is not one of the spec's locales reads as English.
 */
export function pageLanguage(request: FastifyRequest): Promise<Translator> {
  if (request.i18n) return Promise.resolve(request.i18n);
  const user = request.sessionUser;
  return translator(user ? localeOr(user.language, DEFAULT_LOCALE) : visitorLocale(request));
}

/**
 * The page's translator, as registerPageLanguage's hook found it before the route's handler ran
 * (English on a route whose plugin has no such hook: none of ours).
 */
export function pageTranslator(request: FastifyRequest): Translator {
  return request.i18n ?? english();
}

/**
 * The donor page speaks the donor's language, whoever is logged in: `?lang=` from its switcher
 * (remembered in a cookie), else the cookie, else Accept-Language. An unknown `lang` is ignored.
 */
export function donorTranslator(request: FastifyRequest, reply: FastifyReply): Promise<Translator> {
  const asked = (request.query as Record<string, unknown> | undefined)?.lang;
  if (isLocale(asked)) {
    reply.setCookie(LANG_COOKIE, asked, { path: '/', sameSite: 'lax', httpOnly: true, maxAge: LANG_COOKIE_MAX_AGE, secure: request.server.ctx.config.publicUrl.startsWith('https:') });
    return translator(asked);
  }
  return translator(visitorLocale(request));
}

/**
 * For a plugin whose pages use the browser session (call after registerBrowserSession, so the
 * logged-in user is known): sets `request.i18n` before the routes' own handlers run.
 */
export function registerPageLanguage(app: FastifyInstance): void {
  app.decorateRequest('i18n', null);
  app.addHook('preHandler', async (request) => {
    request.i18n = await pageLanguage(request);
  });
}

/** The HTML error page of every surface's error handler, in the request's language (an error may come before the language hook). */
export const localizedErrorPage: HtmlErrorPage = async (status, message, request, detail) => serverErrorPage(status, message, await pageLanguage(request), detail);
