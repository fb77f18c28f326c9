import type { FastifyInstance } from 'fastify';
import { adminMerchantsPages } from './pages/admin-merchants.pages.js';
import { authPages } from './pages/auth.pages.js';
import { authorizedAppsPages } from './pages/authorized-apps.pages.js';
import { adminPages } from './pages/dashboard/admin.pages.js';
import { appsPages } from './pages/dashboard/apps.pages.js';
import { donationsPages } from './pages/dashboard/donations.pages.js';
import { goalsPages } from './pages/dashboard/goals.pages.js';
import { merchandisePages } from './pages/dashboard/merchandise.pages.js';
import { overviewPages } from './pages/dashboard/overview.pages.js';
import { pollsPages } from './pages/dashboard/polls.pages.js';
import { profilePages } from './pages/dashboard/profile.pages.js';
import { realtimeTokenRoutes } from './pages/dashboard/realtime.js';
import { vendorRoutes } from './pages/dashboard/vendor.routes.js';
import { homePages } from './pages/home.pages.js';
import { staticRoutes } from './static.js';

export async function webRoutes(app: FastifyInstance): Promise<void> {
  await app.register(staticRoutes);
  await app.register(homePages);
  await app.register(authPages);
  await app.register(appsPages);
  await app.register(adminMerchantsPages);
  await app.register(authorizedAppsPages);
  await app.register(vendorRoutes);
  await app.register(overviewPages);
  await app.register(realtimeTokenRoutes);
  await app.register(donationsPages);
  await app.register(goalsPages);
  await app.register(pollsPages);
  await app.register(merchandisePages);
  await app.register(profilePages);
  await app.register(adminPages);
}
