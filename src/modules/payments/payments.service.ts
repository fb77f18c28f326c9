import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ValidationError } from '../../domain/errors.js';
import { toMajor } from '../../domain/money.js';
import { randomToken } from '../../security/crypto.js';
import type { DonationResource } from '../donations/donations.resource.js';
import { createDonation, type NewDonation } from '../donations/donations.service.js';
import * as repo from './payments.repository.js';
import type { PendingDonationRow, ProviderId } from './payments.table.js';

/** What the donor asked to give, kept while they pay at the provider. */
export interface NewPendingDonation {
  userId: number;
  provider: ProviderId;
  /** Minor units. */
  amount: number;
  currency: string;
  username: string;
  message: string;
  pollOptionId?: number;
  pollOptionTitle?: string;
}

export async function createPendingDonation(db: Kysely<DB>, input: NewPendingDonation): Promise<PendingDonationRow> {
  return repo.insertPending(db, {
    // 18 random bytes: 24 characters, within YooMoney's 64-character `label`.
    ref: randomToken(18),
    user_id: input.userId,
    provider: input.provider,
    amount: input.amount,
    currency: input.currency,
    username: input.username,
    message: input.message,
    poll_option_id: input.pollOptionId ?? null,
    poll_option_title: input.pollOptionTitle ?? null,
    checkout_id: null,
    created_at: Date.now(),
    donation_id: null,
  });
}

export async function attachCheckout(db: Kysely<DB>, pendingId: number, checkoutId: string): Promise<void> {
  await repo.setCheckoutId(db, pendingId, checkoutId);
}

export async function pendingDonation(db: Kysely<DB>, ref: string): Promise<PendingDonationRow | undefined> {
  return repo.pendingByRef(db, ref);
}

/** A payment the provider confirmed in a verified notification. */
interface ConfirmedPaymentBase {
  provider: ProviderId;
  /** The provider's own id of the payment: a second notification with it records nothing. */
  paymentId: string;
  /** The streamer the notification was addressed to (their notification URL or secret). */
  userId: number;
  /** Minor units and currency as the provider reports them. */
  amount: number;
  currency: string;
  /** Stored as the donation's `payin_system`. */
  payinSystem: string;
}

/** A payment for a donation the donor page prepared (Stripe, YooMoney): it must match it exactly. */
export interface PaymentForPending extends ConfirmedPaymentBase {
  pendingRef: string;
  /** The provider's checkout id, checked against the one stored when the checkout began. */
  checkoutId?: string;
}

/** A payment that arrives on its own (Ko-fi, the signed intake): it carries the donor's words. */
export interface DirectPayment extends ConfirmedPaymentBase {
  username: string;
  message: string;
  /** What the sender signed, hashed: a reused idempotency key with other content is refused. */
  fingerprint?: string;
}

export type RejectionReason = 'unknown_reference' | 'other_streamer' | 'other_provider' | 'amount_mismatch' | 'currency_mismatch' | 'checkout_mismatch';

export type PaymentOutcome =
  | { status: 'recorded'; donation: DonationResource }
  /** The payment id was recorded before (a retry or a replay): nothing new was written. */
  | { status: 'duplicate'; donationId: number | null; fingerprint: string | null }
  | { status: 'rejected'; reason: RejectionReason };

/**
 * Records the donation a provider confirmed, exactly once per provider payment id: the claim of
 * the id (a unique row, migration 0017), the donation, its goals, poll vote and alert all commit
 * in one transaction, or nothing does. A payment that does not match what the donor page
 * prepared (another streamer's reference, another amount or currency) is rejected before
 * anything is written.
 */
export async function recordProviderPayment(db: Kysely<DB>, payment: PaymentForPending | DirectPayment): Promise<PaymentOutcome> {
  return db.transaction().execute(async (tx): Promise<PaymentOutcome> => {
    let pending: PendingDonationRow | undefined;
    let donation: NewDonation;
    if ('pendingRef' in payment) {
      pending = await repo.pendingByRef(tx, payment.pendingRef);
      const mismatch = pendingMismatch(pending, payment);
      if (mismatch) return { status: 'rejected', reason: mismatch };
      donation = {
        userId: pending!.user_id,
        username: pending!.username,
        message: pending!.message,
        amount: toMajor(pending!.amount),
        currency: pending!.currency,
        payinSystem: payment.payinSystem,
        ...(pending!.poll_option_id !== null ? { pollOptionId: pending!.poll_option_id } : {}),
        ...(pending!.poll_option_title !== null ? { pollOptionTitle: pending!.poll_option_title } : {}),
      };
    } else {
      donation = { userId: payment.userId, username: payment.username, message: payment.message, amount: toMajor(payment.amount), currency: payment.currency, payinSystem: payment.payinSystem };
    }
    const fingerprint = 'fingerprint' in payment ? payment.fingerprint ?? null : null;
    const claimed = await repo.claimPayment(tx, {
      provider: payment.provider, payment_id: payment.paymentId, user_id: payment.userId, pending_id: pending?.id ?? null, fingerprint, created_at: Date.now(),
    });
    if (!claimed) {
      const earlier = await repo.paymentOf(tx, payment.provider, payment.paymentId);
      return { status: 'duplicate', donationId: earlier?.donation_id ?? null, fingerprint: earlier?.fingerprint ?? null };
    }
    const recorded = await recordKeepingTheMoney(tx, donation);
    await repo.setPaymentDonation(tx, payment.provider, payment.paymentId, recorded.id);
    if (pending) await repo.markPendingRecorded(tx, pending.id, recorded.id);
    return { status: 'recorded', donation: recorded };
  });
}

function pendingMismatch(pending: PendingDonationRow | undefined, payment: PaymentForPending): RejectionReason | null {
  if (!pending) return 'unknown_reference';
  if (pending.user_id !== payment.userId) return 'other_streamer';
  if (pending.provider !== payment.provider) return 'other_provider';
  if (pending.currency !== payment.currency) return 'currency_mismatch';
  if (pending.amount !== payment.amount) return 'amount_mismatch';
  if (payment.checkoutId !== undefined && pending.checkout_id !== payment.checkoutId) return 'checkout_mismatch';
  return null;
}

/**
 * The money is in: a poll vote that can no longer be cast (the poll ended while the donor paid)
 * must not lose the donation, so it is recorded without the vote. A refused vote writes nothing
 * (polls.service castDonationVote runs first and throws before any write).
 */
async function recordKeepingTheMoney(tx: Transaction<DB>, donation: NewDonation): Promise<DonationResource> {
  try {
    return await createDonation(tx, donation);
  } catch (err) {
    const votes = donation.pollOptionId !== undefined || donation.pollOptionTitle !== undefined;
    const onlyVote = err instanceof ValidationError && Object.keys(err.errors).every((field) => field === 'poll_option_id' || field === 'poll_option_title');
    if (!votes || !onlyVote) throw err;
    const { pollOptionId: _id, pollOptionTitle: _title, ...withoutVote } = donation;
    return createDonation(tx, withoutVote);
  }
}
