import type { FastifyInstance } from 'fastify';
import { CSP_DIRECTIVES } from '../../http/security-headers.js';
import { requireUser } from '../session.js';
import { requireAdmin, requireMerchantsAdmin } from './dashboard/common.js';
import type { PageModule, PageRoute } from './lazy-routes.js';

// The routes of the page modules that load on first use (lazy-routes.ts), declared here only: what
// Fastify must know before the server listens — method, URL, hooks, rate limits, body and header
// options. A module gives each of its table's routes a handler (`app.get(url, handler)`), nothing
// more; a load checks it handles exactly these routes, and test/web/page-routes.test.ts loads each.

const get = (url: string, options?: PageRoute['options']): PageRoute => (options ? { method: 'GET', url, options } : { method: 'GET', url });
const post = (url: string, options?: PageRoute['options']): PageRoute => (options ? { method: 'POST', url, options } : { method: 'POST', url });
/** A dashboard page: a logged-in user. */
const user = () => ({ preHandler: requireUser });
/** A dashboard form: a logged-in user and a CSRF token bound to the session. */
const form = (app: FastifyInstance) => ({ preHandler: [requireUser, app.csrfProtection] });
const admin = () => ({ preHandler: [requireUser, requireAdmin] });
const adminForm = (app: FastifyInstance) => ({ preHandler: [requireUser, requireAdmin, app.csrfProtection] });

/**
 * Per IP (rate-limit.ts): sign-up runs scrypt on every post, log-in is where passwords are guessed.
 * A failing counter store lets posts through rather than failing them.
 */
export const SIGNUP_LIMIT = { max: 10, timeWindow: 15 * 60_000, skipOnError: true };
export const LOGIN_LIMIT = { max: 10, timeWindow: 60_000, skipOnError: true };
export const DONATE_LIMIT = { max: 30, timeWindow: 60_000, skipOnError: true };
export const TEST_ALERT_LIMIT = { max: 30, timeWindow: 60_000 };

/** The file inputs of a widget variation form. */
export const FILE_FIELDS = ['image_file', 'sound_file'] as const;
/** Variation forms read an image and a sound file each up to MEDIA_MAX_BYTES (body-parsers `config.uploads`). */
export const variationUploads = (app: FastifyInstance) => ({ uploads: { fields: FILE_FIELDS, maxBytes: app.ctx.config.mediaMaxBytes } });
/** The preview is framed by the settings page and plays the files chosen in the form (blob: URLs) before they are uploaded. */
export const PREVIEW_HELMET = {
  contentSecurityPolicy: { useDefaults: false, directives: { ...CSP_DIRECTIVES, imgSrc: [...CSP_DIRECTIVES.imgSrc, 'blob:'], mediaSrc: [...CSP_DIRECTIVES.mediaSrc, 'blob:'], frameAncestors: ["'self'"] } },
  frameguard: { action: 'sameorigin' as const },
};

/**
 * The dashboard's, log-in's and admin's modules load as one group (browser-pages.ts); the donor
 * page, which visitors open, and the widgets, which OBS opens, each on their own.
 */
const browserPages = () => import('./browser-pages.js');

export interface LazyPageModule {
  /** For messages and the agreement test. */
  name: string;
  load: () => Promise<PageModule>;
  routes: (app: FastifyInstance) => PageRoute[];
}

/** The browser pages (pagesPlugin), in registration order. */
export const PAGE_MODULES: LazyPageModule[] = [
  { name: 'home', load: async () => (await browserPages()).homePages, routes: () => [get('/')] },
  {
    name: 'auth',
    load: async () => (await browserPages()).authPages,
    routes: (app) => [
      get('/signup'),
      post('/signup', { preHandler: app.csrfProtection, config: { rateLimit: SIGNUP_LIMIT } }),
      get('/login'),
      post('/login', { preHandler: app.csrfProtection, config: { rateLimit: LOGIN_LIMIT } }),
      post('/logout', { preHandler: app.csrfProtection }),
    ],
  },
  {
    name: 'apps',
    load: async () => (await browserPages()).appsPages,
    routes: (app) => [get('/dashboard/apps', user()), post('/dashboard/apps', form(app)), post('/dashboard/apps/:id/edit', form(app)), post('/dashboard/apps/:id/rotate', form(app)), post('/dashboard/apps/:id/delete', form(app))],
  },
  {
    name: 'admin-merchants',
    load: async () => (await browserPages()).adminMerchantsPages,
    routes: (app) => {
      const merchantsAdmin = { preHandler: [requireUser, requireMerchantsAdmin] };
      const merchantsForm = { preHandler: [requireUser, requireMerchantsAdmin, app.csrfProtection] };
      return [get('/admin/merchants', merchantsAdmin), post('/admin/merchants', merchantsForm), post('/admin/merchants/apps/:id/access', merchantsForm)];
    },
  },
  {
    name: 'authorized-apps',
    load: async () => (await browserPages()).authorizedAppsPages,
    routes: (app) => [get('/dashboard/authorized-apps', user()), post('/dashboard/authorized-apps/:clientId/revoke', form(app))],
  },
  {
    name: 'webhooks',
    load: async () => (await browserPages()).webhookPages,
    routes: (app) => [
      get('/dashboard/webhooks', user()),
      post('/dashboard/webhooks', form(app)),
      post('/dashboard/webhooks/:id/secret', form(app)),
      post('/dashboard/webhooks/:id/reenable', form(app)),
      post('/dashboard/webhooks/:id/remove', form(app)),
      post('/dashboard/webhooks/:id/deliveries/:delivery/redeliver', form(app)),
    ],
  },
  {
    name: 'donor',
    load: async () => (await import('./donor.pages.js')).donorPages,
    routes: (app) => [get('/r/:code'), post('/r/:code', { preHandler: app.csrfProtection, config: { rateLimit: DONATE_LIMIT } }), get('/r/:code/paid/:ref'), get('/r/:code/thanks/:id')],
  },
  {
    name: 'widget-settings',
    load: async () => (await browserPages()).widgetSettingsPages,
    routes: (app) => [
      get('/dashboard/widgets', user()),
      post('/dashboard/widgets/token', form(app)),
      get('/dashboard/widgets/variations/new', user()),
      post('/dashboard/widgets/variations', { ...form(app), config: variationUploads(app) }),
      get('/dashboard/widgets/variations/:id', user()),
      post('/dashboard/widgets/variations/:id', { ...form(app), config: variationUploads(app) }),
      get('/dashboard/widgets/preview', { preHandler: requireUser, helmet: PREVIEW_HELMET }),
      post('/dashboard/widgets/variations/:id/delete', form(app)),
      post('/dashboard/widgets/variations/:id/test', form(app)),
    ],
  },
  {
    name: 'overview',
    load: async () => (await browserPages()).overviewPages,
    routes: (app) => [get('/dashboard', user()), post('/dashboard/test-alert', { ...form(app), config: { rateLimit: TEST_ALERT_LIMIT } }), post('/dashboard/onboarding/link-copied', form(app))],
  },
  { name: 'donations', load: async () => (await browserPages()).donationsPages, routes: () => [get('/dashboard/donations', user())] },
  {
    name: 'goals',
    load: async () => (await browserPages()).goalsPages,
    routes: (app) => [get('/dashboard/goals', user()), post('/dashboard/goals', form(app)), post('/dashboard/goals/:id', form(app)), post('/dashboard/goals/:id/close', form(app))],
  },
  {
    name: 'polls',
    load: async () => (await browserPages()).pollsPages,
    routes: (app) => [get('/dashboard/polls', user()), post('/dashboard/polls', form(app)), post('/dashboard/polls/:id/options', form(app)), post('/dashboard/polls/:id/close', form(app))],
  },
  {
    name: 'moderation',
    load: async () => (await browserPages()).moderationPages,
    routes: (app) => [
      get('/dashboard/moderation', user()),
      post('/dashboard/moderation', form(app)),
      post('/dashboard/moderation/skip', form(app)),
      post('/dashboard/moderation/:id/approve', form(app)),
      post('/dashboard/moderation/:id/reject', form(app)),
    ],
  },
  {
    name: 'merchandise',
    load: async () => (await browserPages()).merchandisePages,
    routes: (app) => [get('/dashboard/merchandise', user()), post('/dashboard/merchandise/promocode', form(app))],
  },
  {
    name: 'payments',
    load: async () => (await browserPages()).paymentsPages,
    routes: (app) => [get('/dashboard/payments', user()), post('/dashboard/payments/:provider', form(app)), post('/dashboard/payments/signed/rotate', form(app))],
  },
  {
    name: 'profile',
    load: async () => (await browserPages()).profilePages,
    routes: (app) => [get('/dashboard/profile', user()), post('/dashboard/profile', form(app)), post('/dashboard/profile/password', form(app))],
  },
  {
    name: 'admin',
    load: async () => (await browserPages()).adminPages,
    routes: (app) => [get('/admin', admin()), get('/admin/users', admin()), post('/admin/users/:id/active', adminForm(app)), get('/admin/rates', admin()), post('/admin/rates', adminForm(app))],
  },
];

/** The OBS browser sources and their JSON API (widgetsPlugin): the widget token in the URL, checked by the handlers. */
export const WIDGET_MODULE: LazyPageModule = {
  name: 'widget',
  load: async () => (await import('./widget.pages.js')).widgetPages,
  routes: () => [
    get('/widget/alerts'),
    get('/widget/goal'),
    get('/widget/poll'),
    get('/widget/api/token'),
    get('/widget/api/unshown'),
    post('/widget/api/shown'),
    get('/widget/api/variations'),
    get('/widget/api/goal'),
    get('/widget/api/poll'),
  ],
};
