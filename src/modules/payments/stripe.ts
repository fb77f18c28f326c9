import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';
import { INPUT_CURRENCIES } from '../../domain/currency.js';
import { CheckoutUnavailable, type CheckoutPaymentProvider } from '../donations/payment-provider.js';
import { logRefusal, outcomeReply, rawBody } from './notifications.js';
import { recordProviderPayment } from './payments.service.js';

/**
 * Stripe Checkout with the instance's Stripe account (STRIPE_SECRET_KEY): the money goes to the
 * operator's account, not the streamer's — Stripe Connect (paying out to streamers' own accounts)
 * is not supported. The donor pays on a Checkout Session; the `checkout.session.completed` (or,
 * for delayed methods, `checkout.session.async_payment_succeeded`) webhook records the donation.
 */
export const STRIPE_LABEL = 'Stripe';

/** Where the Stripe client sends API requests; tests point it at a loopback stand-in. */
export interface StripeApiEndpoint {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

export function stripeClient(secretKey: string, endpoint?: StripeApiEndpoint): Stripe {
  return new Stripe(secretKey, { maxNetworkRetries: 1, timeout: 20_000, telemetry: false, ...(endpoint ?? {}) });
}

export function stripeProvider(stripe: Stripe): CheckoutPaymentProvider {
  return {
    id: 'stripe',
    kind: 'checkout',
    label: STRIPE_LABEL,
    description: 'You pay by card on Stripe’s secure checkout page; the alert appears once Stripe confirms the payment.',
    isTest: false,
    currencies: INPUT_CURRENCIES,
    async beginCheckout({ streamer, pending, returnUrl, cancelUrl }) {
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            client_reference_id: pending.ref,
            metadata: { openalerts_ref: pending.ref, streamer_id: String(streamer.id) },
            line_items: [{ quantity: 1, price_data: { currency: pending.currency.toLowerCase(), unit_amount: pending.amount, product_data: { name: `Donation to ${streamer.name}` } } }],
            success_url: returnUrl,
            cancel_url: cancelUrl,
          },
          // A retried create (network error) must not open a second session for the same donation.
          { idempotencyKey: `openalerts-checkout-${pending.ref}` },
        );
      } catch (err) {
        if (err instanceof Stripe.errors.StripeError) throw new CheckoutUnavailable(`Stripe did not open a Checkout Session: ${err.message}`, { cause: err });
        throw err;
      }
      if (!session.url) throw new Error(`Stripe returned Checkout Session ${session.id} without a URL`);
      return { kind: 'redirect', url: session.url, checkoutId: session.id };
    },
  };
}

const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** POST /payments/stripe/webhook: events signed with STRIPE_WEBHOOK_SECRET (Stripe-Signature). */
export function stripeWebhookRoutes(stripe: Stripe, webhookSecret: string) {
  return async function (app: FastifyInstance): Promise<void> {
    app.post('/payments/stripe/webhook', async (request, reply) => {
      const signature = request.headers['stripe-signature'];
      let event: Stripe.Event;
      try {
        // The package's own check: HMAC over the raw body, and a timestamp at most 300 s old.
        event = stripe.webhooks.constructEvent(rawBody(request), typeof signature === 'string' ? signature : '', webhookSecret);
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw err;
        logRefusal(request, 'stripe', null, 'bad signature');
        return reply.status(400).send({ message: 'Invalid signature: the Stripe-Signature header does not match STRIPE_WEBHOOK_SECRET, or the event is too old.' });
      }
      if (!PAID_EVENTS.has(event.type)) return reply.send({ received: true, ignored: event.type });
      const session = event.data.object as Stripe.Checkout.Session;
      // A completed session of a delayed method (bank debit) is not paid yet: its
      // async_payment_succeeded event comes later and records it then.
      if (session.payment_status !== 'paid') {
        request.log.info({ provider: 'stripe', paymentId: session.id, paymentStatus: session.payment_status }, 'Stripe checkout not paid yet; waiting for its payment');
        return reply.send({ received: true, ignored: 'not paid yet' });
      }
      const streamerId = Number(session.metadata?.streamer_id);
      if (!session.client_reference_id || !Number.isSafeInteger(streamerId) || session.amount_total === null || !session.currency) {
        logRefusal(request, 'stripe', session.id, 'not an OpenAlerts checkout');
        return reply.send({ received: true, ignored: 'not an OpenAlerts checkout' });
      }
      const outcome = await recordProviderPayment(app.ctx.db, {
        provider: 'stripe',
        paymentId: session.id,
        pendingRef: session.client_reference_id,
        checkoutId: session.id,
        userId: streamerId,
        amount: session.amount_total,
        currency: session.currency.toUpperCase(),
        payinSystem: STRIPE_LABEL,
      });
      return outcomeReply(request, reply, 'stripe', session.id, outcome);
    });
  };
}
