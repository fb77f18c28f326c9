import type { Kysely } from 'kysely';
import type { NowStatements } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { msg, NotFoundError } from '../../domain/errors.js';
import { AmountError, toMajor, toMinor } from '../../domain/money.js';
import { findDonation } from '../donations/donations.repository.js';
import { toDonationResource } from '../donations/donations.resource.js';
import type { DonationRow } from '../donations/donations.table.js';
import { enqueueEvent, enqueueEventNow, type NewEvent } from '../outbox/outbox.repository.js';
import * as repo from './moderation.repository.js';
import type { ModerationSettingsRow, ModerationStatus } from './moderation.table.js';
import { shownText, violations, type LinkMode, type TextRules, type Violation, type WordMode } from './rules.js';

/** A streamer's moderation settings, as the rules and the pages use them. */
export interface ModerationSettings extends TextRules {
  /** Minor units of the streamer's main currency; 0: every message shows. */
  minMessageAmount: number;
  ipRateLimit: number | null;
  donorRateLimit: number | null;
  rateWindowSeconds: number;
  approvalRequired: boolean;
  alertDelaySeconds: number;
}

export const DEFAULT_SETTINGS: ModerationSettings = Object.freeze({
  bannedWords: [],
  bannedWordsMode: 'mask',
  links: 'allow',
  maxMessageLength: null,
  minMessageAmount: 0,
  ipRateLimit: null,
  donorRateLimit: null,
  rateWindowSeconds: 60,
  approvalRequired: false,
  alertDelaySeconds: 0,
});

export const SETTINGS_LIMITS = {
  bannedWords: 500,
  bannedWordLength: 100,
  maxMessageLength: 300,
  rateLimit: 1000,
  rateWindowSeconds: 24 * 3600,
  alertDelaySeconds: 600,
} as const;

function toSettings(row: ModerationSettingsRow): ModerationSettings {
  return {
    bannedWords: JSON.parse(row.banned_words) as string[],
    bannedWordsMode: row.banned_words_mode,
    links: row.links,
    maxMessageLength: row.max_message_length,
    minMessageAmount: Number(row.min_message_amount),
    ipRateLimit: row.ip_rate_limit,
    donorRateLimit: row.donor_rate_limit,
    rateWindowSeconds: row.rate_window_seconds,
    approvalRequired: row.approval_required === 1,
    alertDelaySeconds: row.alert_delay_seconds,
  };
}

/** The streamer's settings, or null when they never saved any (no rules at all). */
export async function moderationSettings(db: Kysely<DB>, userId: number): Promise<ModerationSettings | null> {
  const row = await repo.findSettings(db, userId);
  return row ? toSettings(row) : null;
}

/** The settings form as submitted: strings, as a browser sends them. */
export interface SettingsForm {
  banned_words: string;
  banned_words_mode: string;
  links: string;
  max_message_length: string;
  min_message_amount: string;
  ip_rate_limit: string;
  donor_rate_limit: string;
  rate_window_seconds: string;
  approval_required: string;
  alert_delay_seconds: string;
}

/** Why a settings field was refused: a key of the page's catalog (`moderation.error.<code>`). */
export type SettingsErrorCode = 'too_many_words' | 'word_too_long' | 'mode' | 'whole_number' | 'amount' | 'too_large';

/** A whole number from `min` to `max`, '' for none (null), or an error code. */
function wholeNumber(value: string, min: number, max: number): number | null | SettingsErrorCode {
  const v = value.trim();
  if (v === '') return null;
  if (!/^\d{1,9}$/.test(v) || Number(v) < min) return 'whole_number';
  return Number(v) > max ? 'too_large' : Number(v);
}

/** Validates the form; the settings, or the errors by field. */
export function parseSettingsForm(form: SettingsForm): { settings: ModerationSettings } | { errors: Record<string, SettingsErrorCode> } {
  const errors: Record<string, SettingsErrorCode> = {};
  // One word or phrase per line (commas separate too); blank lines and repeats dropped.
  const words = [...new Set(form.banned_words.split(/[\n,]/).map((w) => w.trim().replace(/\s+/g, ' ')).filter(Boolean))];
  if (words.length > SETTINGS_LIMITS.bannedWords) errors.banned_words = 'too_many_words';
  else if (words.some((w) => [...w].length > SETTINGS_LIMITS.bannedWordLength)) errors.banned_words = 'word_too_long';
  const wordsMode = form.banned_words_mode as WordMode;
  if (wordsMode !== 'mask' && wordsMode !== 'reject') errors.banned_words_mode = 'mode';
  const links = form.links as LinkMode;
  if (links !== 'allow' && links !== 'remove' && links !== 'reject') errors.links = 'mode';
  const number = (field: keyof SettingsForm, min: number, max: number): number | null => {
    const parsed = wholeNumber(form[field], min, max);
    if (typeof parsed === 'string') {
      errors[field] = parsed;
      return null;
    }
    return parsed;
  };
  const maxMessageLength = number('max_message_length', 0, SETTINGS_LIMITS.maxMessageLength);
  const ipRateLimit = number('ip_rate_limit', 1, SETTINGS_LIMITS.rateLimit);
  const donorRateLimit = number('donor_rate_limit', 1, SETTINGS_LIMITS.rateLimit);
  const rateWindowSeconds = number('rate_window_seconds', 1, SETTINGS_LIMITS.rateWindowSeconds) ?? DEFAULT_SETTINGS.rateWindowSeconds;
  const alertDelaySeconds = number('alert_delay_seconds', 0, SETTINGS_LIMITS.alertDelaySeconds) ?? 0;
  let minMessageAmount = 0;
  if (form.min_message_amount.trim() !== '') {
    try {
      minMessageAmount = toMinor(form.min_message_amount.trim());
      if (minMessageAmount < 0) errors.min_message_amount = 'amount';
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      errors.min_message_amount = 'amount';
    }
  }
  if (Object.keys(errors).length) return { errors };
  return {
    settings: {
      bannedWords: words,
      bannedWordsMode: wordsMode,
      links,
      maxMessageLength,
      minMessageAmount,
      ipRateLimit,
      donorRateLimit,
      rateWindowSeconds,
      approvalRequired: form.approval_required === '1' || form.approval_required === 'on',
      alertDelaySeconds,
    },
  };
}

/** The settings as the form shows them. */
export function settingsToForm(s: ModerationSettings): SettingsForm {
  const opt = (n: number | null) => (n === null ? '' : String(n));
  return {
    banned_words: s.bannedWords.join('\n'),
    banned_words_mode: s.bannedWordsMode,
    links: s.links,
    max_message_length: opt(s.maxMessageLength),
    min_message_amount: s.minMessageAmount ? toMajor(s.minMessageAmount).toFixed(2) : '',
    ip_rate_limit: opt(s.ipRateLimit),
    donor_rate_limit: opt(s.donorRateLimit),
    rate_window_seconds: String(s.rateWindowSeconds),
    approval_required: s.approvalRequired ? '1' : '',
    alert_delay_seconds: String(s.alertDelaySeconds),
  };
}

export async function saveModerationSettings(db: Kysely<DB>, userId: number, s: ModerationSettings): Promise<void> {
  await repo.saveSettings(db, {
    user_id: userId,
    banned_words: JSON.stringify(s.bannedWords),
    banned_words_mode: s.bannedWordsMode,
    links: s.links,
    max_message_length: s.maxMessageLength,
    min_message_amount: s.minMessageAmount,
    ip_rate_limit: s.ipRateLimit,
    donor_rate_limit: s.donorRateLimit,
    rate_window_seconds: s.rateWindowSeconds,
    approval_required: s.approvalRequired ? 1 : 0,
    alert_delay_seconds: s.alertDelaySeconds,
    updated_at: Date.now(),
  });
}

/** What a donor typed on the donor page, checked before any money moves. */
export interface DonorInput {
  username: string;
  message: string;
  /** A new poll option the donor typed, if any: it reaches the poll widget. */
  pollOptionTitle?: string;
}

/** A reject-mode rule broken by one of the donor form's fields. */
export interface DonorViolation {
  field: Violation['field'] | 'poll';
  rule: Violation['rule'];
}

/** The reject-mode rules the donor's text breaks. */
export function donorViolations(settings: ModerationSettings | null, input: DonorInput): DonorViolation[] {
  if (!settings) return [];
  const found: DonorViolation[] = violations(settings, { username: input.username, message: input.message });
  if (input.pollOptionTitle) {
    for (const v of violations({ ...settings, maxMessageLength: null }, { username: '', message: input.pollOptionTitle })) found.push({ field: 'poll', rule: v.rule });
  }
  return found;
}

/** A donor's own poll option as the poll widget may show it (banned words masked, links removed). */
export function shownPollOptionTitle(settings: ModerationSettings | null, title: string | undefined): string | undefined {
  if (!settings || title === undefined) return title;
  const shown = shownText({ ...settings, maxMessageLength: null }, { username: '', message: title }).message;
  return shown === '' ? undefined : shown;
}

export const ANONYMOUS_NAME = 'Anonymous';

/**
 * Publishes a just-recorded donation's alert under the streamer's rules, in the transaction that
 * recorded it. Without settings: the alert as sent, at once (nothing else is written). With them:
 * the shown text (rules.ts `shownText`; the message dropped below the minimum amount) is stored
 * beside the donation, and the alert is
 * - held (no outbox row) when the streamer approves every alert, or when the text broke a
 *   reject-mode rule — possible only for donations that did not come through the donor form
 *   (paid elsewhere, the API, the sandbox, the CLI), whose money is already taken;
 * - else queued for publication after the alert delay (the outbox row's `not_before`).
 * Goals and polls were already counted by the caller: they count money, whatever is shown.
 */
export async function publishDonationAlert(tx: Kysely<DB>, settings: ModerationSettings | null, row: DonationRow, recipientName: string): Promise<void> {
  const decision = donationAlertDecision(settings, row);
  if (decision.moderation) await repo.insertDonationModeration(tx, { donation_id: row.id, user_id: row.user_id, ...decision.moderation });
  if (!decision.alert) return;
  await enqueueEvent(tx, donationAlertEvent(row, recipientName, decision.alert));
}

/** `publishDonationAlert` on SQLite, as statements of `transactNow` (createDonation's usual way there). */
export function publishDonationAlertNow(tx: NowStatements, settings: ModerationSettings | null, row: DonationRow, recipientName: string): void {
  const decision = donationAlertDecision(settings, row);
  if (decision.moderation) repo.insertDonationModerationNow(tx, { donation_id: row.id, user_id: row.user_id, ...decision.moderation });
  if (!decision.alert) return;
  enqueueEventNow(tx, donationAlertEvent(row, recipientName, decision.alert));
}

function donationAlertEvent(row: DonationRow, recipientName: string, alert: NonNullable<DonationAlertDecision['alert']>): NewEvent {
  return { type: 'donation.created', userId: row.user_id, payload: donationAlertPayload(row, recipientName, alert), notBefore: alert.notBefore ?? undefined };
}

/** What the streamer's rules decide for a donation: its moderation row (none without settings) and its alert (none while held). */
export interface DonationAlertDecision {
  moderation: { status: ModerationStatus; shown_username: string; shown_message: string; reasons: string; publish_at: number | null; decided_at: null } | null;
  alert: { username: string; message: string; notBefore: number | null } | null;
}

/**
 * `publishDonationAlert`'s decision without its writes (pure): the batched PostgreSQL path of
 * createDonation writes the same rows in one statement with many donations.
 */
export function donationAlertDecision(settings: ModerationSettings | null, row: Omit<DonationRow, 'id'>): DonationAlertDecision {
  if (!settings) return { moderation: null, alert: { username: row.username, message: row.message, notBefore: null } };
  const typedName = row.username === ANONYMOUS_NAME ? '' : row.username;
  const broken = violations(settings, { username: typedName, message: row.message });
  const shown = shownText(settings, { username: typedName, message: row.message });
  const reasons: string[] = [...shown.applied];
  let message = shown.message;
  if (message !== '' && row.amount_in_user_currency < settings.minMessageAmount) {
    message = '';
    reasons.push('below_minimum');
  }
  const held = settings.approvalRequired || broken.length > 0;
  if (settings.approvalRequired) reasons.push('approval');
  if (broken.length > 0) reasons.push('rule');
  const publishAt = held ? null : row.created_at + settings.alertDelaySeconds * 1000;
  const username = shown.username || ANONYMOUS_NAME;
  return {
    moderation: { status: held ? 'held' : 'published', shown_username: username, shown_message: message, reasons: JSON.stringify(reasons), publish_at: publishAt, decided_at: null },
    alert: held ? null : { username, message, notBefore: settings.alertDelaySeconds > 0 ? publishAt : null },
  };
}

/** The `donation.created` payload: the donation resource with the text the stream may show, and `reason` (compatibility.md §5). */
export function donationAlertPayload(row: DonationRow, recipientName: string, shown: { username: string; message: string }) {
  return { ...toDonationResource({ ...row, username: shown.username, message: shown.message }, recipientName), reason: 'default' as const };
}

/** The streamer's settings from a row read elsewhere (the batched look-up of createDonation); null for none. */
export function settingsOfRow(row: ModerationSettingsRow | null | undefined): ModerationSettings | null {
  return row ? toSettings(row) : null;
}

/** A donation as the dashboard and the widget show it: the moderated text, and its alert's state. */
export type ShownDonation = DonationRow & { moderation: ModerationStatus | null; publishAt: number | null };

/** Puts each donation's shown text in place of what the donor sent (rows of one streamer). */
export async function shownDonations(db: Kysely<DB>, userId: number, rows: DonationRow[]): Promise<ShownDonation[]> {
  const moderation = await repo.moderationOf(db, userId, rows.map((r) => r.id));
  return rows.map((r) => {
    const m = moderation.get(r.id);
    return m
      ? { ...r, username: m.shown_username, message: m.shown_message, moderation: m.status, publishAt: m.publish_at === null ? null : Number(m.publish_at) }
      : { ...r, moderation: null, publishAt: null };
  });
}

/** The donations the alerts widget may show by `now` (published and due), with their shown text. */
export async function alertableDonations(db: Kysely<DB>, userId: number, rows: DonationRow[], now = Date.now()): Promise<DonationRow[]> {
  const shown = await shownDonations(db, userId, rows);
  return shown
    .filter((d) => d.moderation === null || (d.moderation === 'published' && d.publishAt !== null && d.publishAt <= now))
    .map(({ moderation: _m, publishAt: _p, ...row }) => row);
}

/** The approval queue: held donations, oldest first, with their shown text. */
export async function approvalQueue(db: Kysely<DB>, userId: number, limit = 100): Promise<repo.HeldDonation[]> {
  return repo.heldDonations(db, userId, limit);
}

export async function heldCount(db: Kysely<DB>, userId: number): Promise<number> {
  return repo.countHeld(db, userId);
}

/**
 * The streamer approves a held alert: it is published now, with its shown text. Approving twice
 * publishes once; a donation that is not held (or not theirs) is a 404.
 */
export async function approveDonation(db: Kysely<DB>, user: { id: number; name: string }, donationId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const now = Date.now();
    if (!(await repo.decideHeld(tx, user.id, donationId, 'published', now))) throw new NotFoundError(msg('err.moderation.not_held'));
    const row = await findDonation(tx, user.id, donationId);
    const m = (await repo.moderationOf(tx, user.id, [donationId])).get(donationId)!;
    await enqueueEvent(tx, {
      type: 'donation.created',
      userId: user.id,
      payload: { ...toDonationResource({ ...row!, username: m.shown_username, message: m.shown_message }, user.name), reason: 'default' },
    });
  });
}

/** The streamer rejects a held alert: it is never published. The donation (the money) stays. */
export async function rejectDonation(db: Kysely<DB>, userId: number, donationId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    if (!(await repo.decideHeld(tx, userId, donationId, 'rejected', Date.now()))) throw new NotFoundError(msg('err.moderation.not_held'));
  });
}

/**
 * "Skip current alert": a control message on the widget channel, through the outbox like every
 * publication. It has no `id` or amount, so widgets that predate it ignore it.
 */
export async function skipCurrentAlert(db: Kysely<DB>, userId: number): Promise<void> {
  await db.transaction().execute((tx) => enqueueEvent(tx, { type: 'widget.skip_alert', userId, payload: { name: 'control', reason: 'skip_alert', sent_at: Date.now() } }));
}
