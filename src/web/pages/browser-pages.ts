// The browser pages a streamer or an administrator uses (start page, sign-up and log-in,
// dashboard, admin), imported together on the first request to one of them (page-routes.ts). One
// import for the group rather than one per module: with a chunk per module, esbuild splits the code
// they share with the server into a chunk per combination of importers, and the server would load
// those many small chunks at every start.
export { homePages } from './home.pages.js';
export { authPages } from './auth.pages.js';
export { appsPages } from './dashboard/apps.pages.js';
export { adminMerchantsPages } from './admin-merchants.pages.js';
export { authorizedAppsPages } from './authorized-apps.pages.js';
export { webhookPages } from './dashboard/webhooks.pages.js';
export { widgetSettingsPages } from './widget-settings.pages.js';
export { overviewPages } from './dashboard/overview.pages.js';
export { donationsPages } from './dashboard/donations.pages.js';
export { goalsPages } from './dashboard/goals.pages.js';
export { pollsPages } from './dashboard/polls.pages.js';
export { moderationPages } from './dashboard/moderation.pages.js';
export { merchandisePages } from './dashboard/merchandise.pages.js';
export { paymentsPages } from './dashboard/payments.pages.js';
export { profilePages } from './dashboard/profile.pages.js';
export { adminPages } from './dashboard/admin.pages.js';
