/**
 * The payment step between a donor's form and a recorded donation. Pluggable: the donor page
 * takes any `PaymentProvider` (donorPages plugin option `paymentProvider`); the built-in one is
 * the test / self-hosted provider, which takes no money and settles at once.
 *
 * Contract: `settle` is called only after the donation input has passed validation; it resolves
 * when the money is taken (or, for the test provider, immediately) with the title stored as the
 * donation's `payin_system`, and rejects when the payment failed. Providers that need a redirect
 * to a hosted checkout and a webhook are a later extension of this interface.
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
  /** Stored on the donation and shown by the API as `payin_system.title` (INTEROP §2). */
  payinSystem: string;
}

export interface PaymentProvider {
  readonly id: string;
  /** Shown on the donor page next to the pay button. */
  readonly label: string;
  /** A sentence for donors about what happens when they pay. */
  readonly description: string;
  /** True when no real money moves; the donor page says so prominently. */
  readonly isTest: boolean;
  settle(request: PaymentRequest): Promise<PaymentSettlement>;
}

/** The built-in provider of a self-hosted install: records the donation as paid, takes no money. */
export const testPaymentProvider: PaymentProvider = {
  id: 'test',
  label: 'Test / self-hosted payment',
  description: 'This server uses the built-in test / self-hosted payment provider: no money is charged, and the donation is recorded as paid immediately.',
  isTest: true,
  async settle() {
    return { payinSystem: 'Test payment' };
  },
};
