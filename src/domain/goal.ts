import { addFieldMessage, msg, type FieldMessages, type Message } from './errors.js';
import { isOutputCurrency, OUTPUT_CURRENCIES } from './currency.js';
import { AMOUNT_EXAMPLES, AmountError, amountMessage, toMinor } from './money.js';
import { convertMinor, type RateTable } from './rates.js';

/**
 * Donation goals: pure rules, no I/O.
 *
 * Decisions (README "Goals and polls"):
 * - A goal's currency is any OUTPUT currency (the list a streamer's main currency comes from), by
 *   default the streamer's main currency. Donations arrive in input currencies and are converted.
 * - A streamer may run several goals at once (up to MAX_ACTIVE_GOALS); every donation raises every
 *   goal active at the donation's time, each in its own currency.
 * - `raised_amount` starts at `start_amount` and only grows by donations; changing `start_amount`
 *   later shifts it by the difference.
 * - A goal ends when closed or when `expires_at` passes; an ended goal is final.
 */
export const GOAL_LIMITS = { title: 255 } as const;
export const MAX_ACTIVE_GOALS = 20;
/** `expires_at` must lie within this horizon: far enough for any campaign, catches typos like 20255. */
export const MAX_GOAL_HORIZON_MS = 10 * 365 * 24 * 3600 * 1000;

export type FieldErrors = FieldMessages;

export interface GoalFields {
  title: string;
  currency: string;
  /** Minor units of `currency`. */
  startAmount: number;
  goalAmount: number;
  /** Epoch ms or null (no end). */
  expiresAt: number | null;
}

export interface GoalInput {
  title?: unknown;
  currency?: unknown;
  startAmount?: unknown;
  goalAmount?: unknown;
  /** ISO 8601 / `YYYY-MM-DD HH:MM:SS` (UTC unless an offset is given), epoch ms, null or '' for none. */
  expiresAt?: unknown;
}

const add = (errors: FieldErrors, field: string, message: Message) => addFieldMessage(errors, field, message);

/**
 * How messages name these fields: the API's field name in English ("The goal_amount field is
 * required."), a word of the reader's language on pages.
 */
const FIELD_LABELS: Record<string, Message> = {
  title: msg('err.label.title'),
  start_amount: msg('err.label.start_amount'),
  goal_amount: msg('err.label.goal_amount'),
};
const labelOf = (field: string): string | Message => FIELD_LABELS[field] ?? field;

/** Parses an amount field into minor units, or records why not. */
export function amountField(errors: FieldErrors, field: string, value: unknown, label: string | Message = labelOf(field)): number | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') {
    add(errors, field, msg('err.amount.not_number', { label, ...AMOUNT_EXAMPLES }));
    return undefined;
  }
  try {
    return toMinor(value);
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    add(errors, field, amountMessage(label, err.problem));
    return undefined;
  }
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Reads a date-time as the dashboard, CLI and our own JSON write it: ISO 8601 or
 * `YYYY-MM-DD HH:MM:SS`. Without an offset it is UTC, like every date-time we send (compatibility.md §1).
 * Returns null for anything else, including impossible dates such as 2025-02-30.
 */
export function parseDateTime(value: string): number | null {
  const m = DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone] = m;
  const offset = !zone || zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${offset}`);
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 2025-02-30 over to March; a date that does not exist is an error.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  return ms;
}

/** `expires_at`: absent/null/'' = none; otherwise a date-time in the future, within the horizon. */
export function expiresAtField(errors: FieldErrors, value: unknown, now: number): number | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  let ms: number | null = null;
  if (typeof value === 'number' && Number.isInteger(value)) ms = value;
  else if (typeof value === 'string') ms = parseDateTime(value);
  if (ms === null) {
    add(errors, 'expires_at', msg('err.goal.expires_at_format'));
    return undefined;
  }
  if (ms <= now) add(errors, 'expires_at', msg('err.goal.expires_at_past'));
  else if (ms > now + MAX_GOAL_HORIZON_MS) add(errors, 'expires_at', msg('err.goal.expires_at_far'));
  return ms;
}

export function titleField(errors: FieldErrors, field: string, value: unknown, max: number): string | undefined {
  if (typeof value !== 'string' || !value.trim()) {
    add(errors, field, msg('err.field.required', { field: labelOf(field) }));
    return undefined;
  }
  const title = value.trim();
  // Code points, as AJV's maxLength and Laravel's mb_strlen count them.
  if ([...title].length > max) add(errors, field, msg('err.field.max_chars', { field: labelOf(field), max }));
  return title;
}

export function outputCurrencyField(errors: FieldErrors, value: unknown, fallback: string): string {
  if (value === undefined || value === null || value === '') return fallback;
  const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (!isOutputCurrency(code)) add(errors, 'currency', msg('err.currency.one_of', { list: OUTPUT_CURRENCIES.join(', ') }));
  return code;
}

/** The start/goal relation: a goal must be above where it starts. */
export function checkGoalAmounts(errors: FieldErrors, startAmount: number, goalAmount: number): void {
  if (goalAmount <= 0) add(errors, 'goal_amount', msg('err.amount.positive', { label: labelOf('goal_amount') }));
  else if (goalAmount <= startAmount) add(errors, 'goal_amount', msg('err.goal.amount_not_above_start'));
}

/** Validates a new goal; throws nothing, returns the fields or the errors. */
export function validateNewGoal(input: GoalInput, ctx: { defaultCurrency: string; now: number }): { fields: GoalFields } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const title = titleField(errors, 'title', input.title, GOAL_LIMITS.title);
  const currency = outputCurrencyField(errors, input.currency, ctx.defaultCurrency);
  const startAmount = input.startAmount === undefined || input.startAmount === null || input.startAmount === '' ? 0 : amountField(errors, 'start_amount', input.startAmount);
  const goalAmount = input.goalAmount === undefined || input.goalAmount === null || input.goalAmount === ''
    ? (add(errors, 'goal_amount', msg('err.field.required', { field: labelOf('goal_amount') })), undefined)
    : amountField(errors, 'goal_amount', input.goalAmount);
  if (startAmount !== undefined && goalAmount !== undefined) checkGoalAmounts(errors, startAmount, goalAmount);
  const expiresAt = expiresAtField(errors, input.expiresAt, ctx.now);
  if (Object.keys(errors).length) return { errors };
  return { fields: { title: title!, currency, startAmount: startAmount!, goalAmount: goalAmount!, expiresAt: expiresAt! } };
}

/** How much a donation adds to a goal: its amount converted into the goal's currency (half-up). */
export function goalContribution(donationMinor: number, donationCurrency: string, goalCurrency: string, rates: RateTable): number {
  return convertMinor(donationMinor, donationCurrency, goalCurrency, rates);
}

/** New raised amount after the start amount is edited: donations already counted stay counted. */
export function raisedAfterStartChange(raised: number, oldStart: number, newStart: number): number {
  return Math.max(0, raised - oldStart + newStart);
}

/** Has the goal's end passed at `now`? A goal without `expires_at` never expires. */
export function isExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && expiresAt <= now;
}
