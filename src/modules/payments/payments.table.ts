import type { Generated, Selectable } from 'kysely';

import type { ProviderId, StreamerProviderId } from '../../domain/payment-providers.js';

export type { ProviderId, StreamerProviderId };

export interface PaymentSettingsTable {
  user_id: number;
  provider: StreamerProviderId;
  enabled: number;
  /** JSON of the streamer's credentials for this provider, sealed (security/crypto encryptSecret); null when none. */
  credentials_sealed: string | null;
  updated_at: number;
}

export interface PendingDonationsTable {
  id: Generated<number>;
  /** Random, unguessable; the provider echoes it back (YooMoney `label`, Stripe `client_reference_id`). */
  ref: string;
  user_id: number;
  provider: ProviderId;
  /** Minor units of `currency`: what the provider must confirm, exactly. */
  amount: number;
  currency: string;
  username: string;
  message: string;
  poll_option_id: number | null;
  poll_option_title: string | null;
  /** The provider's checkout (Stripe Checkout Session id), when it has one. */
  checkout_id: string | null;
  created_at: number;
  /** The first donation a confirmed payment recorded from it; null while unpaid. */
  donation_id: number | null;
}

export interface ProviderPaymentsTable {
  id: Generated<number>;
  provider: ProviderId;
  /** The provider's own id of the payment, unique per provider (migration 0017). */
  payment_id: string;
  user_id: number;
  pending_id: number | null;
  donation_id: number | null;
  /** SHA-256 of what the sender signed (signed intake): a reused idempotency key with other content is refused. */
  fingerprint: string | null;
  created_at: number;
}

export interface PaymentTables {
  payment_settings: PaymentSettingsTable;
  pending_donations: PendingDonationsTable;
  provider_payments: ProviderPaymentsTable;
}

export type PaymentSettingsRow = Selectable<PaymentSettingsTable>;
export type PendingDonationRow = Selectable<PendingDonationsTable>;
export type ProviderPaymentRow = Selectable<ProviderPaymentsTable>;
