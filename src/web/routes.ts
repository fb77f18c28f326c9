import type { FastifyInstance } from 'fastify';
import { errorHandler, htmlUnlessJsonAsked, jsonUnlessHtmlAsked } from '../http/error-handler.js';
import { localizedErrorPage, registerPageLanguage } from './i18n.js';
import { lazyPages } from './pages/lazy-routes.js';
import { PAGE_MODULES, WIDGET_MODULE } from './pages/page-routes.js';
import { realtimeTokenRoutes } from './pages/dashboard/realtime.js';
import { vendorRoutes } from './pages/dashboard/vendor.routes.js';
import { registerBrowserSession } from './session.js';
import { staticRoutes } from './static.js';
import { mediaRoutes } from '../modules/media/media.routes.js';

/**
 * The pages people use in a browser: start page, sign-up and log-in, the dashboard, the admin
 * pages, the donor page. They own the browser session (cookies, `request.sessionUser`, CSRF tokens
 * bound to the session) and answer errors as HTML pages — JSON only to the dashboard's scripts,
 * which ask for it.
 */
export async function pagesPlugin(app: FastifyInstance): Promise<void> {
  await registerBrowserSession(app);
  registerPageLanguage(app);
  app.setErrorHandler(errorHandler(htmlUnlessJsonAsked, localizedErrorPage));

  // Each page module's routes are registered now, its code loads on the first request to one of
  // them (lazy-routes.ts): start-up does not pay for pages nobody has asked for yet.
  for (const pages of PAGE_MODULES) await app.register(lazyPages(pages.name, pages.load, pages.routes));
  await app.register(realtimeTokenRoutes);
}

/**
 * OBS browser sources (/widget/alerts|goal|poll) and their JSON API (/widget/api/*), authenticated
 * by the widget token in the URL only: no cookies, no session. OBS navigating to a widget asks for
 * text/html and gets an HTML error; the widget's own scripts get `{message}` JSON.
 */
export async function widgetsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(errorHandler(jsonUnlessHtmlAsked, localizedErrorPage));
  await app.register(lazyPages(WIDGET_MODULE.name, WIDGET_MODULE.load, WIDGET_MODULE.routes));
}

/** Our static files, vendor bundles, default avatars and uploaded alert media: public, cacheable, no session. */
export async function assetsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(staticRoutes);
  await app.register(vendorRoutes);
  await app.register(mediaRoutes);
}
