import type { FastifyInstance } from 'fastify';
import { alwaysJson, errorHandler } from '../../http/error-handler.js';
import { kofiWebhookRoutes } from './kofi.js';
import { keepRawBodies } from './notifications.js';
import { yoomoneyNotificationRoutes } from './yoomoney.js';

/**
 * Payment providers' notifications (/payments/*): server to server, no session, no CSRF, raw
 * bodies (each provider signs the bytes it sent), JSON errors. Only the providers the instance
 * enables have routes; the signed intake lives in the API (/api/v1, signed-intake.ts).
 */
export async function paymentNotificationsPlugin(app: FastifyInstance): Promise<void> {
  keepRawBodies(app);
  app.setErrorHandler(errorHandler(alwaysJson));
  const { payments } = app.ctx;
  if (payments.stripe && payments.config.stripe) {
    // Imported here so that an instance without Stripe never loads the package (providers.ts).
    const { stripeWebhookRoutes } = await import('./stripe.js');
    await app.register(stripeWebhookRoutes(payments.stripe, payments.config.stripe.webhookSecret));
  }
  if (payments.instanceEnables('yoomoney')) await app.register(yoomoneyNotificationRoutes);
  if (payments.instanceEnables('kofi')) await app.register(kofiWebhookRoutes);
}
