import type { FastifyInstance } from 'fastify';
import { adminMerchantsPages } from './pages/admin-merchants.pages.js';
import { appsPages } from './pages/apps.pages.js';
import { authPages } from './pages/auth.pages.js';
import { authorizedAppsPages } from './pages/authorized-apps.pages.js';
import { homePages } from './pages/home.pages.js';
import { staticRoutes } from './static.js';

export async function webRoutes(app: FastifyInstance): Promise<void> {
  await app.register(staticRoutes);
  await app.register(homePages);
  await app.register(authPages);
  await app.register(appsPages);
  await app.register(adminMerchantsPages);
  await app.register(authorizedAppsPages);
}
