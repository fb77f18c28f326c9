import { INPUT_CURRENCIES, type InputCurrency } from '../../domain/currency.js';
import type { ProviderId } from '../../domain/payment-providers.js';

/**
 * The payment step between a donor's form and a recorded donation. Two kinds:
 *
 * - `instant`: `settle` resolves when the money is taken (the built-in test provider: at once, no
 *   money) and the donor page records the donation itself;
 * - `checkout`: the donor page stores a pending donation (modules/payments), `beginCheckout` says
 *   where the donor pays (a redirect to a hosted checkout, or a form posted to the provider), and
 *   only the provider's verified notification records the donation (modules/payments
 *   `recordProviderPayment`), exactly once per provider payment id.
 *
 * Providers whose donors pay elsewhere (Ko-fi, the signed intake) have no donor-page step; their
 * notifications record donations on their own.
 */
export interface PaymentRequest {
  /** The streamer receiving the donation. */
  userId: number;
  /** Major units as the donor typed them, already validated. */
  amount: string;
  currency: string;
  username: string;
}

export interface PaymentSettlement {
  /** Stored on the donation and shown by the API as `payin_system.title` (compatibility.md §2). */
  payinSystem: string;
}

/** What a hosted checkout needs: the pending donation and where to send the donor afterwards. */
export interface CheckoutRequest {
  streamer: { id: number; code: string; name: string };
  pending: { id: number; ref: string; amount: number; currency: string; username: string; message: string };
  /** The streamer's own credentials for this provider (dashboard → Payments). */
  credentials: Readonly<Record<string, string>>;
  /** Absolute URL the donor comes back to after paying (it waits there for the confirmation). */
  returnUrl: string;
  /** Absolute URL of the donor page, for a donor who gives up. */
  cancelUrl: string;
}

export type CheckoutStep =
  /** Send the donor to the provider's page; `checkoutId` is kept to check the notification against. */
  | { kind: 'redirect'; url: string; checkoutId: string | null }
  /** Post these fields to the provider (a form the donor page renders and submits). */
  | { kind: 'form'; action: string; fields: Readonly<Record<string, string>> };

interface ProviderInfo {
  readonly id: ProviderId;
  /** Shown on the donor page; also the donation's `payin_system` title. */
  readonly label: string;
  /** A sentence for donors about what happens when they pay (translated as `payment.<id>.description` when the catalog has it). */
  readonly description: string;
  /** True when no real money moves; the donor page says so prominently. */
  readonly isTest: boolean;
  /** Currencies donors may pay in with this provider. */
  readonly currencies: readonly InputCurrency[];
}

export interface InstantPaymentProvider extends ProviderInfo {
  readonly kind: 'instant';
  settle(request: PaymentRequest): Promise<PaymentSettlement>;
}

export interface CheckoutPaymentProvider extends ProviderInfo {
  readonly kind: 'checkout';
  /** Rejects with CheckoutUnavailable when the provider cannot be reached or refuses to open a checkout. */
  beginCheckout(request: CheckoutRequest): Promise<CheckoutStep>;
}

/** The provider could not open a checkout now (network, outage, refused request): the donor may try again. */
export class CheckoutUnavailable extends Error {}

export type PaymentProvider = InstantPaymentProvider | CheckoutPaymentProvider;

/** The title the test provider stores as `payin_system`; the thanks page marks such donations. */
export const TEST_PAYIN_SYSTEM = 'Test payment';

/**
 * The built-in provider of a sandbox or the two-command demo: records the donation as paid, takes
 * no money. On only while the instance allows it (config `payments.sandbox`: PUBLIC_URL on
 * loopback, or SANDBOX=1).
 */
export const testPaymentProvider: InstantPaymentProvider = {
  id: 'test',
  kind: 'instant',
  label: 'Test / self-hosted payment',
  description: 'This server uses the built-in test / self-hosted payment provider: no money is charged, and the donation is recorded as paid immediately.',
  isTest: true,
  currencies: INPUT_CURRENCIES,
  async settle() {
    return { payinSystem: TEST_PAYIN_SYSTEM };
  },
};
