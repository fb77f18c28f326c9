import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { addFieldMessage, ConflictError, msg, NotFoundError, uniqueMessages, ValidationError, type Message } from '../../domain/errors.js';
import { outputCurrencyField, titleField, type FieldErrors } from '../../domain/goal.js';
import { checkOptionTitles, cleanOptionTitle, isPollType, optionTitleKey, POLL_LIMITS, POLL_TYPES, voteTally, type PollType } from '../../domain/poll.js';
import type { RateTable } from '../../domain/rates.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import * as repo from './polls.repository.js';
import { toPollDetails, toPollResource, type PollDetails, type PollEvent, type PollEventReason } from './polls.resource.js';
import type { PollRow } from './polls.table.js';

export interface PollInput {
  title?: unknown;
  /** `count` (default) or `sum`. */
  type?: unknown;
  /** At least two titles. */
  options?: unknown;
  allowUserOptions?: unknown;
  /** Currency `sum` polls count in; default the streamer's main currency. */
  currency?: unknown;
}

/** Fields the dashboard may change on a running poll. Options are never removed or renamed: they carry votes. */
export interface PollPatch {
  title?: unknown;
  type?: unknown;
  allowUserOptions?: unknown;
  /** New option titles; ones that already exist (ignoring case) are skipped. */
  addOptions?: unknown;
}

export interface PollListOptions {
  state?: repo.PollState;
  limit?: number;
}

/** A donation's vote, as `createDonation` passes it on. */
export interface DonationVote {
  userId: number;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  at: number;
  pollOptionId?: number;
  pollOptionTitle?: string;
}

const add = (errors: FieldErrors, field: string, message: Message) => addFieldMessage(errors, field, message);

/** 0/1 flags as forms, JSON and the CLI send them. */
function flagField(errors: FieldErrors, field: string, value: unknown): 0 | 1 | undefined {
  if (value === true || value === 1 || value === '1' || value === 'true') return 1;
  if (value === false || value === 0 || value === '0' || value === 'false') return 0;
  add(errors, field, msg('err.field.flag', { field }));
  return undefined;
}

function typeField(errors: FieldErrors, value: unknown): PollType | undefined {
  if (isPollType(value)) return value;
  add(errors, 'type', msg('err.field.one_of', { label: msg('err.label.type'), list: POLL_TYPES.join(', ') }));
  return undefined;
}

/**
 * Shape checks of a donation's vote that need no database (run before the donation's
 * transaction): a positive option id or a title of at most 100 characters, not both.
 */
export function voteInputErrors(input: { pollOptionId?: unknown; pollOptionTitle?: unknown }): FieldErrors {
  const errors: FieldErrors = {};
  const { pollOptionId: id, pollOptionTitle: title } = input;
  if (id !== undefined && title !== undefined) add(errors, 'poll_option_id', msg('err.poll.vote_both'));
  else if (id !== undefined && !(typeof id === 'number' && Number.isSafeInteger(id) && id > 0)) add(errors, 'poll_option_id', msg('err.poll.option_invalid'));
  else if (title !== undefined) {
    if (typeof title !== 'string' || !cleanOptionTitle(title)) add(errors, 'poll_option_title', msg('err.field.empty', { field: 'poll_option_title' }));
    else if ([...cleanOptionTitle(title)].length > POLL_LIMITS.optionTitle) {
      add(errors, 'poll_option_title', msg('err.field.max_chars', { field: 'poll_option_title', max: POLL_LIMITS.optionTitle }));
    }
  }
  return errors;
}

/** Queues a `$polls:poll_<user_id>` publication: the poll with all its options plus `reason`. */
async function publish(tx: Kysely<DB>, poll: PollRow, reason: PollEventReason): Promise<PollDetails> {
  const options = await repo.optionsOf(tx, [poll.id]);
  const event: PollEvent = { ...toPollResource(poll, options), reason };
  await enqueueEvent(tx, { type: `poll.${reason}`, userId: poll.user_id, payload: event });
  return toPollDetails(poll, options);
}

async function ownPoll(db: Kysely<DB>, id: number, userId?: number): Promise<PollRow> {
  const row = await repo.findPoll(db, id);
  if (!row || (userId !== undefined && row.user_id !== userId)) throw new NotFoundError(msg('err.poll.not_found'));
  return row;
}

const ACTIVE_POLL_EXISTS = () => msg('err.poll.already_running');

/** Starts a poll and reports `created`. A streamer has at most one active poll (409 otherwise). */
export async function createPoll(db: Kysely<DB>, userId: number, input: PollInput): Promise<PollDetails> {
  try {
    return await db.transaction().execute(async (tx) => {
      const user = await findStreamer(tx, userId);
      if (!user || !user.is_active) throw new NotFoundError(msg('err.streamer.not_found'));
      const errors: FieldErrors = {};
      const title = titleField(errors, 'title', input.title, POLL_LIMITS.title);
      const type = input.type === undefined || input.type === null || input.type === '' ? 'count' : typeField(errors, input.type);
      const allow = input.allowUserOptions === undefined || input.allowUserOptions === null ? 0 : flagField(errors, 'allow_user_options', input.allowUserOptions);
      const currency = outputCurrencyField(errors, input.currency, user.currency);
      const options = checkOptionTitles(Array.isArray(input.options) ? input.options : []);
      if (options.errors.length) errors.options = options.errors;
      if (Object.keys(errors).length) throw new ValidationError(errors);
      if (await repo.findActivePoll(tx, user.id)) throw new ConflictError(ACTIVE_POLL_EXISTS());

      const now = Date.now();
      const poll = await repo.insertPoll(tx, {
        user_id: user.id,
        title: title!,
        type: type!,
        currency,
        allow_user_options: allow!,
        is_active: 1,
        started_at: now,
        ended_at: null,
        created_at: now,
        updated_at: now,
      });
      await repo.insertOptions(tx, options.titles.map((t) => ({ poll_id: poll.id, title: t, title_key: optionTitleKey(t), created_at: now })));
      return publish(tx, poll, 'created');
    });
  } catch (err) {
    // Two creates racing past the check: the partial unique index lets one through.
    if (isUniqueViolation(err, 'user_id')) throw new ConflictError(ACTIVE_POLL_EXISTS());
    throw err;
  }
}

/** Edits a running poll and reports `updated`. An ended poll cannot change (409). */
export async function updatePoll(db: Kysely<DB>, userId: number, pollId: number, patch: PollPatch): Promise<PollDetails> {
  return db.transaction().execute(async (tx) => {
    await ownPoll(tx, pollId, userId);
    const now = Date.now();
    const poll = await repo.lockActivePoll(tx, { pollId }, now);
    if (!poll) throw new ConflictError(msg('err.poll.ended'));
    const errors: FieldErrors = {};
    const title = patch.title === undefined ? poll.title : titleField(errors, 'title', patch.title, POLL_LIMITS.title);
    const type = patch.type === undefined ? poll.type : typeField(errors, patch.type);
    const allow = patch.allowUserOptions === undefined ? poll.allow_user_options : flagField(errors, 'allow_user_options', patch.allowUserOptions);
    const newTitles: string[] = [];
    if (patch.addOptions !== undefined) {
      if (!Array.isArray(patch.addOptions)) add(errors, 'add_options', msg('err.poll.add_options_array'));
      else {
        const existing = new Set((await repo.optionsOf(tx, [poll.id])).map((o) => o.title_key));
        const problems: Message[] = [];
        const seen = new Set<string>();
        for (const raw of patch.addOptions) {
          const t = typeof raw === 'string' ? cleanOptionTitle(raw) : '';
          if (!t) problems.push(msg('err.poll.option_title_required'));
          else if ([...t].length > POLL_LIMITS.optionTitle) problems.push(msg('err.poll.option_title_too_long', { max: POLL_LIMITS.optionTitle }));
          else if (!existing.has(optionTitleKey(t)) && !seen.has(optionTitleKey(t))) {
            seen.add(optionTitleKey(t));
            newTitles.push(t);
          }
        }
        if (existing.size + newTitles.length > POLL_LIMITS.maxOptions) problems.push(msg('err.poll.too_many_options', { max: POLL_LIMITS.maxOptions }));
        if (problems.length) errors.add_options = uniqueMessages(problems);
      }
    }
    if (Object.keys(errors).length) throw new ValidationError(errors);
    const updated = await repo.updatePollRow(tx, poll.id, { title: title!, type: type!, allow_user_options: allow!, updated_at: now });
    await repo.insertOptions(tx, newTitles.map((t) => ({ poll_id: poll.id, title: t, title_key: optionTitleKey(t), created_at: now })));
    return publish(tx, updated, 'updated');
  });
}

/**
 * Ends a poll and reports `finished` (the payload carries the final winners). Closing an ended
 * poll returns it without a second event. Without `userId` (the CLI) any streamer's poll.
 */
export async function closePoll(db: Kysely<DB>, pollId: number, opts: { userId?: number } = {}): Promise<PollDetails> {
  return db.transaction().execute(async (tx) => {
    await ownPoll(tx, pollId, opts.userId);
    const closed = await repo.closePollRow(tx, pollId, Date.now());
    if (closed) return publish(tx, closed, 'finished');
    const poll = await ownPoll(tx, pollId);
    return toPollDetails(poll, await repo.optionsOf(tx, [poll.id]));
  });
}

export async function getPoll(db: Kysely<DB>, pollId: number, opts: { userId?: number } = {}): Promise<PollDetails> {
  const poll = await ownPoll(db, pollId, opts.userId);
  return toPollDetails(poll, await repo.optionsOf(db, [poll.id]));
}

/** The streamer's running poll, or null. */
export async function getActivePoll(db: Kysely<DB>, userId: number): Promise<PollDetails | null> {
  const poll = await repo.findActivePoll(db, userId);
  return poll ? toPollDetails(poll, await repo.optionsOf(db, [poll.id])) : null;
}

/** A streamer's polls, newest first, each with its options. */
export async function listPolls(db: Kysely<DB>, userId: number, opts: PollListOptions = {}): Promise<PollDetails[]> {
  const polls = await repo.listPollRows(db, userId, { state: opts.state ?? 'all', limit: Math.min(Math.max(opts.limit ?? 50, 1), 100) });
  const options = await repo.optionsOf(db, polls.map((p) => p.id));
  return polls.map((p) => toPollDetails(p, options.filter((o) => o.poll_id === p.id)));
}

/**
 * Called inside the donation's transaction (donations.service). Counts the donation's vote in
 * the streamer's active poll — for an existing option by id, or by title (an existing title,
 * ignoring case, votes for that option; a new one is added where `allow_user_options` is 1) —
 * and queues `updated`. Any problem is a ValidationError, which rolls the donation back too.
 * Returns the option voted for, or null when the donation does not vote.
 */
export async function castDonationVote(tx: Kysely<DB>, vote: DonationVote, rates: RateTable): Promise<number | null> {
  if (vote.pollOptionId === undefined && vote.pollOptionTitle === undefined) return null;
  const field = vote.pollOptionId !== undefined ? 'poll_option_id' : 'poll_option_title';
  const poll = await repo.lockActivePoll(tx, { userId: vote.userId }, vote.at);
  if (!poll) throw ValidationError.field(field, msg('err.poll.none_active'));

  let optionId: number;
  if (vote.pollOptionId !== undefined) {
    const option = await repo.findOption(tx, poll.id, vote.pollOptionId);
    if (!option) throw ValidationError.field(field, msg('err.poll.option_invalid'));
    optionId = option.id;
  } else {
    const title = cleanOptionTitle(vote.pollOptionTitle!);
    const key = optionTitleKey(title);
    const existing = await repo.findOptionByKey(tx, poll.id, key);
    if (existing) optionId = existing.id;
    else {
      if (!poll.allow_user_options) throw ValidationError.field(field, msg('err.poll.no_new_options'));
      if ((await repo.countOptions(tx, poll.id)) >= POLL_LIMITS.maxOptions) {
        throw ValidationError.field(field, msg('err.poll.full', { max: POLL_LIMITS.maxOptions }));
      }
      await repo.insertOptions(tx, [{ poll_id: poll.id, title, title_key: key, added_by_donor: 1, created_at: vote.at }]);
      optionId = (await repo.findOptionByKey(tx, poll.id, key))!.id;
    }
  }
  await repo.addVote(tx, optionId, voteTally(vote.amount, vote.currency, poll.currency, rates).sum);
  await publish(tx, poll, 'updated');
  return optionId;
}
