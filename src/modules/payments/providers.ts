import type Stripe from 'stripe';
import type { PaymentsConfig } from '../../config/config.js';
import type { StreamerProviderId } from '../../domain/payment-providers.js';
import { testPaymentProvider, type PaymentProvider } from '../donations/payment-provider.js';
import type { StreamerSettings } from './payment-settings.service.js';
import type { StripeApiEndpoint } from './stripe.js';
import { yoomoneyProvider } from './yoomoney.js';

/**
 * Which providers this instance runs (PAYMENT_PROVIDERS, SANDBOX) and which of them a streamer
 * takes: a provider is offered to donors only when the instance enables it and the streamer
 * turned it on with their credentials.
 */
export class PaymentProviders {
  /**
   * The Stripe package (the largest one we use) is loaded only when the instance enables Stripe,
   * so an instance without it neither reads nor compiles it at start.
   */
  static async create(config: PaymentsConfig, stripeEndpoint?: StripeApiEndpoint): Promise<PaymentProviders> {
    if (!config.stripe) return new PaymentProviders(config, null, null);
    const { stripeClient, stripeProvider } = await import('./stripe.js');
    const stripe = stripeClient(config.stripe.secretKey, stripeEndpoint);
    return new PaymentProviders(config, stripe, stripeProvider(stripe));
  }

  private constructor(
    readonly config: PaymentsConfig,
    /** The Stripe client of the instance's account; null unless Stripe is enabled. */
    readonly stripe: Stripe | null,
    private readonly stripeCheckout: PaymentProvider | null,
  ) {}

  get sandbox(): boolean {
    return this.config.sandbox;
  }

  instanceEnables(provider: StreamerProviderId): boolean {
    return this.config.enabled.includes(provider);
  }

  /** Providers the streamer's donor page offers, in this order; empty: donations are not open. */
  donorProviders(settings: StreamerSettings): PaymentProvider[] {
    const on = (id: StreamerProviderId) => this.instanceEnables(id) && settings.get(id)?.enabled === true;
    const providers: PaymentProvider[] = [];
    if (on('stripe') && this.stripeCheckout) providers.push(this.stripeCheckout);
    if (on('yoomoney')) providers.push(yoomoneyProvider);
    if (this.config.sandbox) providers.push(testPaymentProvider);
    return providers;
  }

  /** The streamer's Ko-fi page for a donor-page link, when Ko-fi is on for them. */
  kofiPage(settings: StreamerSettings): string | null {
    const kofi = settings.get('kofi');
    return this.instanceEnables('kofi') && kofi?.enabled && kofi.credentials.page_url ? kofi.credentials.page_url : null;
  }
}
