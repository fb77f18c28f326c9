import { INPUT_CURRENCIES, isInputCurrency } from '../../../domain/currency.js';
import { AmountError, toMinor } from '../../../domain/money.js';
import type { DonationFilter } from '../../../modules/donations/donations.service.js';
import type { Translator } from '../../../i18n/translator.js';
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

function dayStart(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? null : ms;
}

/** Reads and checks the filter form. Dates are whole UTC days, both ends included. */
export function readDonationFilter(t: Translator, query: unknown): { form: DonationFilterForm; filter: DonationFilter; errors: FieldErrors } {
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
    else errors.currency = [t.t('donations.error.currency', { list: INPUT_CURRENCIES.join(', ') })];
  }
  if (form.from) {
    const ms = dayStart(form.from);
    if (ms === null) errors.from = [t.t('donations.error.from')];
    else filter.fromMs = ms;
  }
  if (form.to) {
    const ms = dayStart(form.to);
    if (ms === null) errors.to = [t.t('donations.error.to')];
    else filter.toMsExclusive = ms + DAY_MS;
  }
  if (filter.fromMs !== undefined && filter.toMsExclusive !== undefined && filter.toMsExclusive <= filter.fromMs) {
    errors.to = [t.t('donations.error.order')];
  }
  if (form.min) {
    try {
      filter.minAmount = toMinor(form.min);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      errors.min = [err.problem === 'decimals' ? t.t('donations.error.min_decimals') : err.problem === 'too_large' ? t.t('donor.error.amount_too_large') : t.t('donations.error.min_format')];
    }
  }
  return { form, filter, errors };
}
