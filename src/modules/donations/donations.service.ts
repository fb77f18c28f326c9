import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';
import { convertMinor } from '../../domain/rates.js';
import { loadRates } from '../currencies/currencies.repository.js';
import { raiseGoalsForDonation } from '../goals/goals.service.js';
import { castDonationVote, voteInputErrors } from '../polls/polls.service.js';
import { donationChannel, widgetChannel } from '../outbox/channels.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import { insertDonation } from './donations.repository.js';
import { toDonationResource, type DonationResource } from './donations.resource.js';

export interface NewDonation {
  userId: number;
  username?: string;
  message?: string;
  messageType?: 'text' | 'audio';
  amount: string | number;
  currency: string;
  /** Title of the payment provider that took the money; null for none. */
  payinSystem?: string | null;
  /** Vote in the streamer's active poll for this option (polls.service `castDonationVote`). */
  pollOptionId?: number;
  /** Vote for an option by title; a new title adds an option where the poll allows it. */
  pollOptionTitle?: string;
}

export const DONATION_LIMITS = { username: 64, message: 300 } as const;
export const ANONYMOUS = 'Anonymous';

function validate(input: NewDonation): { amount: number; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  let amount = 0;
  try {
    amount = toMinor(input.amount);
    if (amount <= 0) errors.amount = ['The amount must be greater than 0.'];
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    errors.amount = [`The amount ${err.message}`];
  }
  if (!isInputCurrency(input.currency)) errors.currency = [`The currency must be one of ${INPUT_CURRENCIES.join(', ')}.`];
  if ((input.username ?? '').length > DONATION_LIMITS.username) errors.username = [`The username must not be greater than ${DONATION_LIMITS.username} characters.`];
  if ((input.message ?? '').length > DONATION_LIMITS.message) errors.message = [`The message must not be greater than ${DONATION_LIMITS.message} characters.`];
  if (input.messageType !== undefined && input.messageType !== 'text' && input.messageType !== 'audio') errors.message_type = ['The message type must be text or audio.'];
  Object.assign(errors, voteInputErrors(input));
  return { amount, errors };
}

/**
 * Records a paid donation and queues its alert, in one transaction: the donation exists if and
 * only if its event does (DESIGN: outbox). `reason` is "default" as in the real service (INTEROP §5).
 */
export async function createDonation(db: Kysely<DB>, input: NewDonation): Promise<DonationResource> {
  const { amount, errors } = validate(input);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return db.transaction().execute(async (tx) => {
    const user = await tx.selectFrom('users').select(['id', 'name', 'currency', 'is_active']).where('id', '=', input.userId).executeTakeFirst();
    if (!user || !user.is_active) throw new NotFoundError('This streamer does not exist or no longer accepts donations.');
    const rates = await loadRates(tx);
    const at = Date.now();
    // Goals and polls change in this same transaction: a rejected vote writes nothing at all.
    const pollOptionId = await castDonationVote(tx, { userId: user.id, amount, currency: input.currency, at, pollOptionId: input.pollOptionId, pollOptionTitle: input.pollOptionTitle }, rates);
    await raiseGoalsForDonation(tx, { userId: user.id, amount, currency: input.currency, at }, rates);
    const row = await insertDonation(tx, {
      user_id: user.id,
      username: input.username?.trim() || ANONYMOUS,
      message_type: input.messageType ?? 'text',
      message: input.message ?? '',
      amount,
      currency: input.currency,
      amount_in_user_currency: convertMinor(amount, input.currency, user.currency, rates),
      user_currency: user.currency,
      payin_system: input.payinSystem ?? null,
      is_shown: 0,
      created_at: at,
      shown_at: null,
      poll_option_id: pollOptionId,
    });
    const resource = toDonationResource(row, user.name);
    await enqueueEvent(tx, donationChannel(user.id), { ...resource, reason: 'default' });
    // The streamer's own alerts widget listens on one channel for every alert type.
    await enqueueEvent(tx, widgetChannel(user.id), { ...resource, reason: 'default' });
    return resource;
  });
}
