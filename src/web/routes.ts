import type { FastifyInstance } from 'fastify';
import { errorHandler, htmlUnlessJsonAsked, jsonUnlessHtmlAsked } from '../http/error-handler.js';
import { localizedErrorPage, registerPageLanguage } from './i18n.js';
import { adminMerchantsPages } from './pages/admin-merchants.pages.js';
import { authPages } from './pages/auth.pages.js';
import { authorizedAppsPages } from './pages/authorized-apps.pages.js';
import { adminPages } from './pages/dashboard/admin.pages.js';
import { appsPages } from './pages/dashboard/apps.pages.js';
import { webhookPages } from './pages/dashboard/webhooks.pages.js';
import { donationsPages } from './pages/dashboard/donations.pages.js';
import { goalsPages } from './pages/dashboard/goals.pages.js';
import { merchandisePages } from './pages/dashboard/merchandise.pages.js';
import { moderationPages } from './pages/dashboard/moderation.pages.js';
import { paymentsPages } from './pages/dashboard/payments.pages.js';
import { overviewPages } from './pages/dashboard/overview.pages.js';
import { pollsPages } from './pages/dashboard/polls.pages.js';
import { profilePages } from './pages/dashboard/profile.pages.js';
import { realtimeTokenRoutes } from './pages/dashboard/realtime.js';
import { vendorRoutes } from './pages/dashboard/vendor.routes.js';
import { donorPages } from './pages/donor.pages.js';
import { homePages } from './pages/home.pages.js';
import { widgetSettingsPages } from './pages/widget-settings.pages.js';
import { widgetPages } from './pages/widget.pages.js';
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

  await app.register(homePages);
  await app.register(authPages);
  await app.register(appsPages);
  await app.register(adminMerchantsPages);
  await app.register(authorizedAppsPages);
  await app.register(webhookPages);
  await app.register(donorPages);
  await app.register(widgetSettingsPages);
  await app.register(overviewPages);
  await app.register(realtimeTokenRoutes);
  await app.register(donationsPages);
  await app.register(goalsPages);
  await app.register(pollsPages);
  await app.register(moderationPages);
  await app.register(merchandisePages);
  await app.register(paymentsPages);
  await app.register(profilePages);
  await app.register(adminPages);
}

/**
 * OBS browser sources (/widget/alerts|goal|poll) and their JSON API (/widget/api/*), authenticated
 * by the widget token in the URL only: no cookies, no session. OBS navigating to a widget asks for
 * text/html and gets an HTML error; the widget's own scripts get `{message}` JSON.
 */
export async function widgetsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(errorHandler(jsonUnlessHtmlAsked, localizedErrorPage));
  await app.register(widgetPages);
}

/** Our static files, vendor bundles, default avatars and uploaded alert media: public, cacheable, no session. */
export async function assetsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(staticRoutes);
  await app.register(vendorRoutes);
  await app.register(mediaRoutes);
}
