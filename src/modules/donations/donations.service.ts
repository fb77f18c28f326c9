import type { Kysely, Transaction } from 'kysely';
import { batchedRead } from '../../db/batched-read.js';
import { signalCommit, transactSoon } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { GroupCommit, type ItemOutcome } from '../../db/group-commit.js';
import { DatabaseUnavailableError } from '../../db/unavailable.js';
import type { DB } from '../../db/schema.js';
import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { msg, NotFoundError, UnauthenticatedError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { AmountError, amountMessage, toMinor } from '../../domain/money.js';
import { convertMinor, type RateTable } from '../../domain/rates.js';
import { raiseGoalsForDonation } from '../goals/goals.service.js';
import { castDonationVote, voteInputErrors } from '../polls/polls.service.js';
import { donationAlertDecision, donationAlertPayload, publishDonationAlert, publishDonationAlertNow, settingsOfRow, shownPollOptionTitle } from '../moderation/moderation.service.js';
import { channelsOf } from '../outbox/events.js';
import { outboxClaim } from '../outbox/handover.js';
import { WrittenEvent } from '../outbox/outbox.repository.js';
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

function validate(input: NewDonation): { amount: number; errors: FieldMessages } {
  const errors: FieldMessages = {};
  let amount = 0;
  try {
    amount = toMinor(input.amount);
    if (amount <= 0) errors.amount = [msg('err.amount.positive', { label: msg('err.label.amount') })];
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    errors.amount = [amountMessage(msg('err.label.amount'), err.problem)];
  }
  if (!isInputCurrency(input.currency)) errors.currency = [msg('err.currency.one_of', { list: INPUT_CURRENCIES.join(', ') })];
  if ((input.username ?? '').length > DONATION_LIMITS.username) errors.username = [msg('err.field.max_chars_short', { label: msg('err.label.username'), max: DONATION_LIMITS.username })];
  if ((input.message ?? '').length > DONATION_LIMITS.message) errors.message = [msg('err.field.max_chars_short', { label: msg('err.label.message'), max: DONATION_LIMITS.message })];
  if (input.messageType !== undefined && input.messageType !== 'text' && input.messageType !== 'audio') errors.message_type = [msg('err.donation.message_type')];
  Object.assign(errors, voteInputErrors(input));
  return { amount, errors };
}

/**
 * Records a confirmed (paid) donation and queues its alert, in one transaction: the donation
 * exists if and only if its alert is queued or held for the streamer's approval (architecture.md convention 1: outbox;
 * moderation `publishDonationAlert`). `reason` is "default" as in the real service (compatibility.md §5).
 *
 * The one function every payment path goes through — the test provider, the CLI and dashboard
 * sandbox, and each provider's verified notification (modules/payments) — so what happens to a
 * confirmed donation (goals, polls, the streamer's moderation rules, alert) is decided here once.
 * Given a transaction, it writes in that transaction (a provider records its payment id beside
 * the donation, so both commit or neither does); given the database, it opens its own — on
 * PostgreSQL a group commit with the donations that arrive together (`recordDonationBatch`).
 * Durable before it resolves, either way.
 */
export async function createDonation(db: Kysely<DB>, input: NewDonation): Promise<DonationResource> {
  const { amount, errors } = validate(input);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  if (db.isTransaction) return recordDonationIn(db as Transaction<DB>, input, amount);
  if (dialectOf(db) === 'postgres' && input.pollOptionId === undefined && input.pollOptionTitle === undefined) {
    let batches = donationBatches.get(db);
    if (!batches) {
      // Two lanes, as for sales: one batch reads and writes while the previous one waits for its WAL flush.
      batches = new GroupCommit((jobs) => recordDonationBatch(db, jobs), { lanes: 2, startWhenIdle: true });
      donationBatches.set(db, batches);
    }
    return batches.submit({ input, amount });
  }
  if (input.pollOptionId === undefined && input.pollOptionTitle === undefined) {
    const recorded = await recordDonationSoon(db, input, amount);
    if (recorded) return recorded;
  }
  return db.transaction().execute((tx) => recordDonationIn(tx, input, amount));
}

const NO_STREAMER = () => msg('err.streamer.no_donations');

/** The donation row as written, before it has an id. */
function donationRow(input: NewDonation, amount: number, user: { id: number; currency: string }, rates: RateTable, at: number): Omit<DonationRow, 'id'> {
  return {
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
    poll_option_id: null,
  };
}

/** One donation in a transaction, statement by statement: goals, polls, moderation, alert. */
async function recordDonationIn(tx: Transaction<DB>, input: NewDonation, amount: number): Promise<DonationResource> {
  const { context, rates } = await repo.findDonationContext(tx, input.userId);
  if (!context || !context.user.is_active) throw new NotFoundError(NO_STREAMER());
  const { user } = context;
  const moderation = settingsOfRow(context.moderation);
  const at = Date.now();
  // Goals and polls change in this same transaction: a rejected vote writes nothing at all. A
  // donor's own poll option reaches the poll widget, so it is moderated like the message.
  const pollOptionTitle = shownPollOptionTitle(moderation, input.pollOptionTitle);
  const pollOptionId = await castDonationVote(tx, { userId: user.id, amount, currency: input.currency, at, pollOptionId: input.pollOptionId, pollOptionTitle }, rates);
  // Most streamers run no goal: the context says so without a read of their goals.
  if (context.hasGoals) await raiseGoalsForDonation(tx, { userId: user.id, amount, currency: input.currency, at }, rates);
  const row = await repo.insertDonation(tx, { ...donationRow(input, amount, user, rates, at), poll_option_id: pollOptionId });
  // One event for the donation channel and the streamer's alerts widget (events.ts), with the
  // text the streamer's rules allow on stream; the donation itself keeps what the donor sent.
  await publishDonationAlert(tx, moderation, row, user.name);
  return toDonationResource(row, user.name);
}

/**
 * SQLite: a donation without a vote, to a streamer who runs no goal, as `recordDonationIn` records
 * it — the streamer's context, the donation, its moderation row and alert — in one transaction run
 * within one turn (`transactSoon`: once another thread's turn of the write lock is over), its alert
 * published as it commits. Undefined when it cannot go this way (PostgreSQL, the connection busy, or
 * the streamer runs a goal: goals are raised and published statement by statement), and nothing
 * was written.
 */
function recordDonationSoon(db: Kysely<DB>, input: NewDonation, amount: number): Promise<DonationResource | undefined> {
  return transactSoon(db, (tx) => {
    const { context, rates } = repo.donationContextNow(tx, input.userId);
    if (!context || !context.user.is_active) throw new NotFoundError(NO_STREAMER());
    if (context.hasGoals) return undefined;
    const { user } = context;
    const written = donationRow(input, amount, user, rates, Date.now());
    const row = { id: repo.insertDonationNow(tx, written), ...written };
    publishDonationAlertNow(tx, settingsOfRow(context.moderation), row, user.name);
    return toDonationResource(row, user.name);
  });
}

interface DonationJob {
  input: NewDonation;
  /** Minor units, validated. */
  amount: number;
}

const donationBatches = new WeakMap<Kysely<DB>, GroupCommit<DonationJob, DonationResource>>();
const DONATION_EVENT = 'donation.created';
const PAYLOAD_ID_PREFIX = '{"id":0';

/**
 * PostgreSQL: the streamer contexts (and the rate table) this process decided donations on, with
 * the stamps their writes check (`insertDonationsWithAlerts`). Never trusted on its own: a write
 * whose stamp no longer matches writes nothing and its donation is decided again on a fresh read,
 * so an entry needs no invalidation, only a bound. Unknown and disabled streamers are not kept
 * (their answer, 404, is given without a write to check it), nor those who run a goal (their
 * donations read the context again in a transaction of their own).
 */
interface ContextCache {
  contexts: Map<number, { context: repo.DonationContext; stamp: string }>;
  rates: { table: RateTable; stamp: string } | undefined;
}

/** Streamers whose contexts are kept: far more than donate within the minutes a context lives. */
const CONTEXT_CACHE_LIMIT = 10_000;
const contextCaches = new WeakMap<Kysely<DB>, ContextCache>();

function contextCacheOf(db: Kysely<DB>): ContextCache {
  let cache = contextCaches.get(db);
  if (!cache) contextCaches.set(db, (cache = { contexts: new Map(), rates: undefined }));
  return cache;
}

/**
 * PostgreSQL: a batch of donations in one statement whatever its size when this process knows
 * their streamers — one statement writing every donation with its moderation row and its alert
 * (`insertDonationsWithAlerts`), which commits by itself (no BEGIN/COMMIT round trips; its WAL
 * flush is done when it returns) — and one look-up before it of the streamers it does not know
 * (`findDonationContexts`: the streamer, their moderation settings, whether they run goals, the
 * rates). The write checks each donation's context against the one it was decided on, in its own
 * snapshot; one decided on a context changed since is written not at all and goes into the next
 * batch, which reads its context again. So a committed change — by any node or process — counts
 * from the next statement on, as it did when every batch read first: a setting saved during the
 * batch counts from the next donation on, which READ COMMITTED gives inside a transaction anyway.
 *
 * Donations to a streamer who runs a goal take the transactional path (`recordDonationIn`, goals
 * are raised and published statement by statement), as do votes (createDonation): both read and
 * lock rows the one statement does not.
 */
async function recordDonationBatch(db: Kysely<DB>, jobs: readonly DonationJob[]): Promise<ItemOutcome<DonationResource>[]> {
  const cache = contextCacheOf(db);
  const unknown = cache.rates ? jobs.map((j) => j.input.userId).filter((id) => !cache.contexts.has(id)) : jobs.map((j) => j.input.userId);
  const read = unknown.length > 0 ? await repo.findDonationContexts(db, unknown) : undefined;
  if (read) {
    if (read.rates) cache.rates = read.rates;
    for (const id of unknown) {
      const found = read.contexts.get(id);
      cache.contexts.delete(id);
      // Goal donations read their context again in their own transaction: nothing to save.
      if (!found?.context.user.is_active || found.context.hasGoals) continue;
      cache.contexts.set(id, found);
      if (cache.contexts.size > CONTEXT_CACHE_LIMIT) cache.contexts.delete(cache.contexts.keys().next().value!);
    }
  }
  const rates = cache.rates;
  const at = Date.now();
  const outcomes: ItemOutcome<DonationResource>[] = new Array(jobs.length);
  const writes: { at: number; write: repo.DonationWrite; name: string }[] = [];
  const withGoals: number[] = [];
  jobs.forEach((job, i) => {
    const found = read?.contexts.get(job.input.userId) ?? cache.contexts.get(job.input.userId);
    if (!found || !rates) {
      outcomes[i] = { ok: false, error: new NotFoundError(NO_STREAMER()) };
      return;
    }
    const { context, stamp } = found;
    if (!context.user.is_active) {
      outcomes[i] = { ok: false, error: new NotFoundError(NO_STREAMER()) };
      return;
    }
    if (context.hasGoals) {
      withGoals.push(i);
      return;
    }
    try {
      const row = donationRow(job.input, job.amount, context.user, rates.table, at);
      const decision = donationAlertDecision(settingsOfRow(context.moderation), row);
      const payload = decision.alert && JSON.stringify(donationAlertPayload({ ...row, id: 0 }, context.user.name, decision.alert));
      writes.push({
        at: i,
        name: context.user.name,
        write: {
          donation: row,
          moderation: decision.moderation,
          event: payload === null ? null : { type: DONATION_EVENT, channels: channelsOf(DONATION_EVENT, row.user_id), payloadAfterId: payload.slice(PAYLOAD_ID_PREFIX.length), notBefore: decision.alert!.notBefore },
          stamp,
        },
      });
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  });
  const transactional = Promise.all(
    withGoals.map(async (i) => {
      try {
        outcomes[i] = { ok: true, value: await db.transaction().execute((tx) => recordDonationIn(tx, jobs[i]!.input, jobs[i]!.amount)) };
      } catch (error) {
        outcomes[i] = { ok: false, error };
      }
    }),
  );
  if (rates) await writeDonations(db, writes, rates.stamp, outcomes);
  for (const w of writes) {
    // Left out by the write: decided on a context changed since. Read again in the next batch.
    if ('retry' in outcomes[w.at]!) cache.contexts.delete(w.write.donation.user_id);
  }
  await transactional;
  return outcomes;
}

/**
 * The batch's one write; if it fails with several donations in it (one row broke the statement:
 * its streamer was deleted meanwhile), each is written alone so only the culprit fails. Never
 * throws: the batch's goal donations may have committed already, and must not be written again.
 */
async function writeDonations(db: Kysely<DB>, writes: { at: number; write: repo.DonationWrite; name: string }[], ratesStamp: string, outcomes: ItemOutcome<DonationResource>[]): Promise<void> {
  if (writes.length === 0) return;
  try {
    const claim = outboxClaim(db);
    const { ids, eventIds, claimed } = await repo.insertDonationsWithAlerts(
      db,
      writes.map((w) => w.write),
      ratesStamp,
      claim,
    );
    // The events as written, for the relay: it publishes those claimed for it now (outbox/handover.ts).
    const events: WrittenEvent[] = [];
    writes.forEach(({ write: { donation, event } }, k) => {
      if (!event || ids[k] === null) return;
      const claimedBy = claimed && event.notBefore === null ? claim!.owner : null;
      events.push(new WrittenEvent(eventIds[k]!, event.type, JSON.stringify(event.channels), `{"id":${ids[k]}${event.payloadAfterId}`, donation.created_at, event.notBefore, claimedBy));
    });
    // All left out: the statement committed nothing.
    if (ids.some((id) => id !== null)) signalCommit(db, events);
    writes.forEach((w, k) => {
      const id = ids[k];
      outcomes[w.at] = id === null ? { retry: true } : { ok: true, value: toDonationResource({ ...w.write.donation, id }, w.name) };
    });
  } catch (error) {
    if (writes.length === 1 || error instanceof DatabaseUnavailableError) {
      for (const w of writes) outcomes[w.at] = { ok: false, error };
      return;
    }
    for (const w of writes) await writeDonations(db, [w], ratesStamp, outcomes);
  }
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
