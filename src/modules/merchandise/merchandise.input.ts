import { isLocale, LOCALES } from '../../domain/currency.js';
import { FieldReader } from './input-fields.js';

/** Spec 4.4 / §8 limits. */
export const MERCHANDISE_LIMITS = { identifier: 16, title: 1024, url: 128 } as const;
/** Latest `end_at_ts` accepted: 9999-12-31 23:59:59 UTC. */
const MAX_TIMESTAMP = 253_402_300_799;
/** Percentages are stored in hundredths: 100 % = 10 000. */
export const HUNDRED_PERCENT = 10_000;
// URL patterns a UI substitutes (spec 4.4); they are stored as sent, and checked as sample values.
const URL_PATTERNS = /\{user_id\}|\{user_merchandise_promocode\}/g;

/** What a 4.4/4.5/4.6 body sets; undefined = not sent, null = cleared. */
export interface MerchandiseInput {
  merchantIdentifier?: string;
  identifier?: string;
  title?: Record<string, string>;
  isActive?: 0 | 1;
  isPercentage?: 0 | 1;
  currency?: string;
  /** Minor units, or hundredths of a percent. */
  priceUser?: number;
  priceService?: number;
  url?: string | null;
  imgUrl?: string | null;
  /** Epoch ms. */
  endAt?: number | null;
}

export type MerchandiseMode =
  /** 4.4: everything the table marks required. */
  | 'create'
  /** 4.5: only `signature` is required. */
  | 'update'
  /** 4.6: identifiers come from the path; title, currency and prices required. */
  | 'upsert';

function readTitle(r: FieldReader, required: boolean): Record<string, string> | undefined {
  const value = r.body.title;
  if (value === undefined || value === null || value === '') return required ? r.requiredMissing('title') : undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return r.fail('title', 'The title field must be an array of titles keyed by locale, such as title[en_US].');
  const title: Record<string, string> = {};
  for (const [locale, text] of Object.entries(value as Record<string, unknown>)) {
    const field = `title.${locale}`;
    if (!isLocale(locale)) {
      r.fail(field, `The locale ${locale} is not supported; use one of ${LOCALES.join(', ')}.`);
      continue;
    }
    if (text === undefined || text === null || text === '') continue;
    if (typeof text !== 'string') {
      r.fail(field, `The ${field} field must be a string.`);
      continue;
    }
    if (text.length > MERCHANDISE_LIMITS.title) {
      r.fail(field, `The ${field} field must not be greater than ${MERCHANDISE_LIMITS.title} characters.`);
      continue;
    }
    title[locale] = text;
  }
  if (title.en_US === undefined && !r.errors['title.en_US']) r.fail('title.en_US', 'The title.en_US field is required.');
  return title;
}

function readUrl(r: FieldReader, field: string): string | null | undefined {
  const url = r.nullableString(field, MERCHANDISE_LIMITS.url);
  if (typeof url !== 'string') return url;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url.replace(URL_PATTERNS, '1'));
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return r.fail(field, `The ${field} field must be a valid http or https URL.`);
  return url;
}

/** Validates a merchandise body; throws one ValidationError listing every problem. */
export function readMerchandiseInput(body: Record<string, unknown>, mode: MerchandiseMode): MerchandiseInput {
  const r = new FieldReader(body);
  const required = mode !== 'update';
  const input: MerchandiseInput = {};
  if (mode !== 'upsert') {
    input.merchantIdentifier = r.string('merchant_identifier', { required: mode === 'create', max: 255 });
    input.identifier = r.string('merchandise_identifier', { required: mode === 'create', max: MERCHANDISE_LIMITS.identifier });
  }
  input.title = readTitle(r, required);
  input.isActive = r.flag('is_active');
  input.isPercentage = r.flag('is_percentage');
  input.currency = r.currency('currency', { required });
  input.priceUser = r.amount('price_user', { required });
  input.priceService = r.amount('price_service', { required });
  input.url = readUrl(r, 'url');
  input.imgUrl = readUrl(r, 'img_url');
  if (body.end_at_ts === '' || body.end_at_ts === null) input.endAt = null;
  else {
    const seconds = r.integer('end_at_ts', { min: 0, max: MAX_TIMESTAMP });
    if (seconds !== undefined) input.endAt = seconds * 1000;
  }
  r.throwIfInvalid();
  for (const key of Object.keys(input) as (keyof MerchandiseInput)[]) if (input[key] === undefined) delete input[key];
  return input;
}

/** Identifiers taken from the 4.6 path obey the same rules as the body fields. */
export function readPathIdentifiers(merchantIdentifier: string, merchandiseIdentifier: string): { merchantIdentifier: string; identifier: string } {
  const r = new FieldReader({ merchant_identifier: merchantIdentifier, merchandise_identifier: merchandiseIdentifier });
  const merchant = r.string('merchant_identifier', { required: true, max: 255 });
  const identifier = r.string('merchandise_identifier', { required: true, max: MERCHANDISE_LIMITS.identifier });
  r.throwIfInvalid();
  return { merchantIdentifier: merchant!, identifier: identifier! };
}
