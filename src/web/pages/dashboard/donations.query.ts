import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';
import { INPUT_CURRENCIES, isInputCurrency } from '../../../domain/currency.js';
import { AmountError, toMinor } from '../../../domain/money.js';
import type { DonationRow } from '../../../modules/donations/donations.table.js';
import { field, type FieldErrors } from './common.js';

const DAY_MS = 24 * 3600 * 1000;
export const DONATIONS_PER_PAGE = 30;

/** The donations page's filters, as typed (kept to refill the form and build page links). */
export interface DonationFilterForm {
  donor: string;
  currency: string;
  from: string;
  to: string;
  min: string;
}

/** Checked filters. Dates are whole UTC days, both ends included. */
export interface DonationFilter {
  donor?: string;
  currency?: string;
  fromMs?: number;
  toMsExclusive?: number;
  /** Minor units: of `currency` when one is chosen, else of the streamer's currency at donation time. */
  minAmount?: number;
}

function dayStart(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? null : ms;
}

export function readDonationFilter(query: unknown): { form: DonationFilterForm; filter: DonationFilter; errors: FieldErrors } {
  const form: DonationFilterForm = {
    donor: field(query, 'donor').trim().slice(0, 64),
    currency: field(query, 'currency').trim().toUpperCase(),
    from: field(query, 'from').trim(),
    to: field(query, 'to').trim(),
    min: field(query, 'min').trim(),
  };
  const errors: FieldErrors = {};
  const filter: DonationFilter = {};
  if (form.donor) filter.donor = form.donor;
  if (form.currency) {
    if (isInputCurrency(form.currency)) filter.currency = form.currency;
    else errors.currency = [`The currency must be one of ${INPUT_CURRENCIES.join(', ')}.`];
  }
  if (form.from) {
    const ms = dayStart(form.from);
    if (ms === null) errors.from = ['The from date must be a date such as 2025-01-31.'];
    else filter.fromMs = ms;
  }
  if (form.to) {
    const ms = dayStart(form.to);
    if (ms === null) errors.to = ['The to date must be a date such as 2025-01-31.'];
    else filter.toMsExclusive = ms + DAY_MS;
  }
  if (filter.fromMs !== undefined && filter.toMsExclusive !== undefined && filter.toMsExclusive <= filter.fromMs) {
    errors.to = ['The to date must not be before the from date.'];
  }
  if (form.min) {
    try {
      filter.minAmount = toMinor(form.min);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      errors.min = [`The minimum amount ${err.message}`];
    }
  }
  return { form, filter, errors };
}

/** `%`, `_` and `\` typed by the streamer match themselves (LIKE … ESCAPE '\' on both dialects). */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** One page of a streamer's donations matching `filter`, newest first, and how many match. */
export async function filteredDonations(db: Kysely<DB>, userId: number, filter: DonationFilter, page: number): Promise<{ rows: DonationRow[]; total: number }> {
  let query = db.selectFrom('donations').where('user_id', '=', userId);
  if (filter.donor) query = query.where(sql<boolean>`lower(username) like ${likePattern(filter.donor)} escape '\\'`);
  if (filter.currency) query = query.where('currency', '=', filter.currency);
  if (filter.fromMs !== undefined) query = query.where('created_at', '>=', filter.fromMs);
  if (filter.toMsExclusive !== undefined) query = query.where('created_at', '<', filter.toMsExclusive);
  if (filter.minAmount !== undefined) query = query.where(filter.currency ? 'amount' : 'amount_in_user_currency', '>=', filter.minAmount);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').limit(DONATIONS_PER_PAGE).offset((page - 1) * DONATIONS_PER_PAGE).execute(),
    query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
