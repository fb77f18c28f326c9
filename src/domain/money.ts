import { msg, type Message } from '../i18n/messages.js';
import { MINOR_UNIT_DIGITS } from './currency.js';

const SCALE = 10 ** MINOR_UNIT_DIGITS;
/** 10^13 minor units: far beyond any real donation, far below 2^53 so arithmetic stays exact. */
export const MAX_MINOR = 10 ** 13;

/** Why an amount was refused, so pages can say it in the reader's language. */
export type AmountProblem = 'decimals' | 'format' | 'too_large';

export class AmountError extends Error {
  constructor(
    message: string,
    readonly problem: AmountProblem,
  ) {
    super(message);
  }
}

/** The examples of an amount in messages, written the reader's way (`10 or 10.50`, `10 или 10,50`). */
export const AMOUNT_EXAMPLES = { whole: 10, decimal: 10.5 } as const;

/** What to tell about a refused amount; `label` names the field ("The {label} is too large."). */
export function amountMessage(label: string | Message, problem: AmountProblem): Message {
  if (problem === 'decimals') return msg('err.amount.decimals', { label });
  if (problem === 'too_large') return msg('err.amount.too_large', { label });
  return msg('err.amount.format', { label, ...AMOUNT_EXAMPLES });
}

/**
 * Parses a decimal amount exactly (no float arithmetic) into integer minor units.
 * Accepts "12", "12.5", "12.50", 12.5; rejects more than two decimals, signs, exponents.
 */
export function toMinor(input: string | number): number {
  const text = typeof input === 'number' ? numberToPlain(input) : input.trim();
  const match = /^(\d{1,13})(?:[.,](\d{1,2}))?$/.exec(text);
  if (!match) {
    if (/^\d+[.,]\d{3,}$/.test(text)) throw new AmountError('must have at most two decimal places.', 'decimals');
    throw new AmountError('must be a positive number such as 10 or 10.50.', 'format');
  }
  const minor = Number(match[1]) * SCALE + Number((match[2] ?? '').padEnd(MINOR_UNIT_DIGITS, '0'));
  if (minor > MAX_MINOR) throw new AmountError('is too large.', 'too_large');
  return minor;
}

function numberToPlain(value: number): string {
  if (!Number.isFinite(value) || value < 0) return 'invalid';
  // toFixed would round 1.005 silently; String keeps what was given so too many decimals are caught.
  const text = String(value);
  return text.includes('e') ? 'invalid' : text;
}

/** Minor units to the JSON number clients expect (2 decimals at most). */
export function toMajor(minor: number): number {
  return minor / SCALE;
}

/**
 * Rounds a non-negative rational minor amount half-up to the nearest minor unit.
 * Used after conversions and percentages; documented in README ("Money and rounding").
 */
export function roundMinor(value: number): number {
  // The epsilon absorbs binary noise such as 1.005 * 100 = 100.49999999999999.
  return Math.floor(value + 0.5 + 1e-9);
}
