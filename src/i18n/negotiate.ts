import { match } from '@formatjs/intl-localematcher';
import Negotiator from 'negotiator';
import { bcp47, DEFAULT_LOCALE, LOCALES, localeFromTag, type Locale } from './locales.js';

const AVAILABLE = LOCALES.map(bcp47);
/** Longer headers and lists are cut: no browser sends more, and matching stays cheap. */
const MAX_HEADER_LENGTH = 1024;
const MAX_RANGES = 12;

function wellFormed(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/**
 * The supported locale a browser's Accept-Language asks for: ranges in the order of their
 * q-values (negotiator parses the header), each matched to the closest supported locale the way
 * CLDR says languages relate (@formatjs/intl-localematcher "best fit": `ru-UA` → ru_RU,
 * `es-MX` → es_US, `iw` → he_HE). Malformed ranges are skipped; nothing usable → en_US.
 */
export function localeFromAcceptLanguage(header: unknown): Locale {
  if (typeof header !== 'string' || header === '') return DEFAULT_LOCALE;
  const ranges = new Negotiator({ headers: { 'accept-language': header.slice(0, MAX_HEADER_LENGTH) } })
    .languages()
    .filter((tag) => tag !== '*' && tag.length <= 35 && wellFormed(tag))
    .slice(0, MAX_RANGES);
  if (ranges.length === 0) return DEFAULT_LOCALE;
  return localeFromTag(match(ranges, AVAILABLE, bcp47(DEFAULT_LOCALE), { algorithm: 'best fit' })) ?? DEFAULT_LOCALE;
}
