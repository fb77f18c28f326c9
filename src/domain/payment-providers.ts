/**
 * The payment providers a streamer can turn on, each also enabled per instance (PAYMENT_PROVIDERS):
 * `stripe` (Stripe Checkout, the instance's Stripe account), `yoomoney` (the streamer's YooMoney
 * wallet, HTTP notifications), `kofi` (the streamer's Ko-fi page, webhooks), `signed` (the signed
 * intake endpoint for any other processor or bot). The built-in `test` provider is the instance's.
 */
export const STREAMER_PROVIDERS = ['stripe', 'yoomoney', 'kofi', 'signed'] as const;
export type StreamerProviderId = (typeof STREAMER_PROVIDERS)[number];
export type ProviderId = 'test' | StreamerProviderId;

export function isStreamerProvider(value: unknown): value is StreamerProviderId {
  return typeof value === 'string' && (STREAMER_PROVIDERS as readonly string[]).includes(value);
}
