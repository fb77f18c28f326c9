import { msg, uniqueMessages, type Message } from './errors.js';
import { toMajor } from './money.js';
import { convertMinor, type RateTable } from './rates.js';

/**
 * Polls: pure rules, no I/O.
 *
 * Decisions (README "Goals and polls"):
 * - One active poll per streamer: a donor's vote must name one unambiguous poll.
 * - `count` polls count donations; `sum` polls add donation amounts converted into the poll's
 *   currency (default: the streamer's main currency). Both tallies are kept, so the type may change.
 * - Option titles are unique per poll ignoring case and runs of whitespace; a donor who types an
 *   existing title votes for that option (even when the poll takes no new options).
 * - `amount_percent` is each option's share of the total, rounded half-up to 2 decimals
 *   independently: equal values always show equal percentages, and the shown percentages add up to
 *   100 within ±0.005 per option (e.g. three equal options show 33.33 each, 99.99 in all).
 * - `is_winner` is 1 for every option sharing the largest value; no winner while every value is 0.
 */
export const POLL_TYPES = ['count', 'sum'] as const;
export type PollType = (typeof POLL_TYPES)[number];

export const POLL_LIMITS = { title: 255, optionTitle: 100, minOptions: 2, maxOptions: 50 } as const;

export function isPollType(value: unknown): value is PollType {
  return typeof value === 'string' && (POLL_TYPES as readonly string[]).includes(value);
}

/** Display form of an option title: trimmed, inner whitespace collapsed to one space. */
export function cleanOptionTitle(title: string): string {
  return title.trim().replace(/\s+/gu, ' ');
}

/** Dedupe key of an option title: the display form, Unicode-normalized and case-folded. */
export function optionTitleKey(title: string): string {
  return cleanOptionTitle(title).normalize('NFKC').toLowerCase();
}

export interface OptionTally {
  id: number;
  title: string;
  /** Number of donations that voted for it. */
  votes: number;
  /** Sum of those donations, minor units of the poll's currency. */
  sum: number;
}

export interface OptionStanding {
  id: number;
  title: string;
  /** `count`: votes; `sum`: major units of the poll's currency. */
  amount_value: number;
  amount_percent: number;
  is_winner: 0 | 1;
}

/** The figure an option competes with: votes or minor units. */
export function optionValue(type: PollType, option: OptionTally): number {
  return type === 'count' ? option.votes : option.sum;
}

/** value / total as a percentage, rounded half-up to 2 decimals, exactly (BigInt: sums reach 10^13). */
export function sharePercent(value: number, total: number): number {
  if (total <= 0) return 0;
  const hundredths = (BigInt(value) * 10000n * 2n + BigInt(total)) / (BigInt(total) * 2n);
  return Number(hundredths) / 100;
}

/** Options in the order given, with their value, share and winner flag (spec §2 "Poll option"). */
export function standings(type: PollType, options: readonly OptionTally[]): OptionStanding[] {
  const values = options.map((o) => optionValue(type, o));
  const total = values.reduce((a, b) => a + b, 0);
  const max = values.reduce((a, b) => Math.max(a, b), 0);
  return options.map((o, i) => ({
    id: o.id,
    title: o.title,
    amount_value: type === 'count' ? values[i]! : toMajor(values[i]!),
    amount_percent: sharePercent(values[i]!, total),
    is_winner: max > 0 && values[i] === max ? 1 : 0,
  }));
}

/** What one donation adds to the option it votes for. */
export function voteTally(donationMinor: number, donationCurrency: string, pollCurrency: string, rates: RateTable): { votes: 1; sum: number } {
  return { votes: 1, sum: convertMinor(donationMinor, donationCurrency, pollCurrency, rates) };
}

/**
 * Checks the option titles of a new poll: at least two, each non-empty and at most 100 characters,
 * no duplicates ignoring case. Returns the cleaned titles and any messages (field `options`).
 */
export function checkOptionTitles(titles: readonly unknown[]): { titles: string[]; errors: Message[] } {
  const errors: Message[] = [];
  const cleaned: string[] = [];
  const seen = new Set<string>();
  for (const raw of titles) {
    if (typeof raw !== 'string' || !cleanOptionTitle(raw)) {
      errors.push(msg('err.poll.option_title_required'));
      continue;
    }
    const title = cleanOptionTitle(raw);
    if ([...title].length > POLL_LIMITS.optionTitle) errors.push(msg('err.poll.option_title_too_long', { max: POLL_LIMITS.optionTitle }));
    const key = optionTitleKey(title);
    if (seen.has(key)) errors.push(msg('err.poll.option_twice', { title }));
    seen.add(key);
    cleaned.push(title);
  }
  if (titles.length < POLL_LIMITS.minOptions) errors.push(msg('err.poll.too_few_options', { min: POLL_LIMITS.minOptions }));
  if (titles.length > POLL_LIMITS.maxOptions) errors.push(msg('err.poll.too_many_options', { max: POLL_LIMITS.maxOptions }));
  return { titles: cleaned, errors: uniqueMessages(errors) };
}
