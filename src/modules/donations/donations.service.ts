import type { Kysely, Transaction } from 'kysely';
import { batchedRead } from '../../db/batched-read.js';
import { dialectOf } from '../../db/dialect.js';
import { DatabaseUnavailableError } from '../../db/unavailable.js';
import type { DB } from '../../db/schema.js';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { NotFoundError, UnauthenticatedError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';
import { convertMinor } from '../../domain/rates.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { loadRates } from '../currencies/currencies.repository.js';
import { raiseGoalsForDonation } from '../goals/goals.service.js';
import { castDonationVote, voteInputErrors } from '../polls/polls.service.js';
import { moderationSettings, publishDonationAlert, shownPollOptionTitle } from '../moderation/moderation.service.js';
import * as repo from './donations.repository.js';
import type { DonationRow } from './donations.table.js';
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
 * Records a confirmed (paid) donation and queues its alert, in one transaction: the donation
 * exists if and only if its alert is queued or held for the streamer's approval (DESIGN: outbox;
 * moderation `publishDonationAlert`). `reason` is "default" as in the real service (INTEROP §5).
 *
 * The one function every payment path goes through — the test provider, the CLI and dashboard
 * sandbox, and each provider's verified notification (modules/payments) — so what happens to a
 * confirmed donation (goals, polls, the streamer's moderation rules, alert) is decided here once.
 * Given a transaction, it writes in that transaction (a provider records its payment id beside
 * the donation, so both commit or neither does); given the database, it opens its own.
 */
export async function createDonation(db: Kysely<DB>, input: NewDonation): Promise<DonationResource> {
  const { amount, errors } = validate(input);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const inTransaction = (work: (tx: Transaction<DB>) => Promise<DonationResource>) =>
    db.isTransaction ? work(db as Transaction<DB>) : db.transaction().execute(work);
  return inTransaction(async (tx) => {
    const user = await findStreamer(tx, input.userId);
    if (!user || !user.is_active) throw new NotFoundError('This streamer does not exist or no longer accepts donations.');
    const rates = await loadRates(tx);
    const moderation = await moderationSettings(tx, user.id);
    const at = Date.now();
    // Goals and polls change in this same transaction: a rejected vote writes nothing at all. A
    // donor's own poll option reaches the poll widget, so it is moderated like the message.
    const pollOptionTitle = shownPollOptionTitle(moderation, input.pollOptionTitle);
    const pollOptionId = await castDonationVote(tx, { userId: user.id, amount, currency: input.currency, at, pollOptionId: input.pollOptionId, pollOptionTitle }, rates);
    await raiseGoalsForDonation(tx, { userId: user.id, amount, currency: input.currency, at }, rates);
    const row = await repo.insertDonation(tx, {
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
    // One event for the donation channel and the streamer's alerts widget (events.ts), with the
    // text the streamer's rules allow on stream; the donation itself keeps what the donor sent.
    await publishDonationAlert(tx, moderation, row, user.name);
    return toDonationResource(row, user.name);
  });
}

export type { DonationFilter } from './donations.repository.js';

/**
 * What a served page of the streamer's donations (spec 4.2) depends on, as one comparable string:
 * their donation counter's version and total (migration 0015: changed by every write in its own
 * transaction, on any node or process), their name (in every item) and their state. The token
 * outlived its user (cached verification) when the streamer is gone or disabled: the token is
 * what is wrong.
 */
function stampOf(stamp: repo.DonationPageStamp | undefined): string {
  if (!stamp || !stamp.isActive) throw new UnauthenticatedError('invalid_token');
  return `${stamp.version}:${stamp.total}:${stamp.name}`;
}

/**
 * A reader of the current stamp of a streamer's donation pages: primary-key reads of the user and
 * their counter, concurrent calls answered by one statement (batched-read.ts: never by a read that
 * started before the call; PostgreSQL only). A call unanswered after `waitLimitMs` fails with 503 +
 * Retry-After.
 */
export function donationPageStampReader(db: Kysely<DB>, waitLimitMs: number): (userId: number) => Promise<string> {
  // SQLite has no round trip to save, and waits out busy_timeout by itself.
  if (dialectOf(db) === 'sqlite') return async (userId) => stampOf((await repo.donationPageStamps(db, [userId])).get(userId));
  const read = batchedRead((userIds: number[]) => repo.donationPageStamps(db, userIds), {
    maxWaitMs: waitLimitMs,
    timeoutError: () => new DatabaseUnavailableError(new Error(`no answer from the database within ${waitLimitMs} ms`)),
  });
  return async (userId) => stampOf(await read(userId));
}

/**
 * Spec 4.2: one page (1-based) of the streamer's donations as the API shows them, newest first,
 * the total, and the stamp (see `donationPageStamp`) they were read at — one statement, so all
 * three are one snapshot.
 */
export async function donationResourcePage(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ data: DonationResource[]; total: number; stamp: string }> {
  const found = await repo.pageOfDonations(db, userId, page, perPage);
  const stamp = stampOf(found?.stamp);
  return { data: found!.rows.map((row) => toDonationResource(row, found!.stamp.name)), total: found!.stamp.total, stamp };
}

/** The dashboard's donation list: one page (1-based) of the donations matching `filter`, newest first. */
export async function searchDonations(db: Kysely<DB>, userId: number, filter: repo.DonationFilter, page: number, perPage: number): Promise<{ rows: DonationRow[]; total: number }> {
  return repo.filteredDonations(db, userId, filter, { limit: perPage, offset: (page - 1) * perPage });
}

/** The streamer's latest donations, newest first. */
export async function latestDonations(db: Kysely<DB>, userId: number, limit: number): Promise<DonationRow[]> {
  return repo.latestDonations(db, userId, limit);
}

/** Count and sum (minor units of `user.currency`) of the donations received in that currency since `since`. */
export async function donationTotalsSince(db: Kysely<DB>, user: { id: number; currency: string }, since: number): Promise<{ count: number; total: number }> {
  return repo.donationTotalsSince(db, user.id, user.currency, since);
}

/** One of the streamer's donations, or undefined (never another streamer's). */
export async function donationOf(db: Kysely<DB>, userId: number, id: number): Promise<DonationRow | undefined> {
  return repo.findDonation(db, userId, id);
}
