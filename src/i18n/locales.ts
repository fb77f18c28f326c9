import { isLocale, LOCALES, type Locale } from '../domain/currency.js';

export { isLocale, LOCALES, type Locale };

/** What every page falls back to, per string and as a whole. */
export const DEFAULT_LOCALE: Locale = 'en_US';

/** The spec's `ru_RU` as the BCP 47 tag that `Intl`, `lang=` and Accept-Language use (`ru-RU`). */
export function bcp47(locale: Locale): string {
  return locale.replace('_', '-');
}

const BY_TAG = new Map<string, Locale>(LOCALES.map((l) => [bcp47(l).toLowerCase(), l]));

/** `ru-RU`, `ru_RU` (any case) → `ru_RU`; anything else → null. */
export function localeFromTag(tag: string): Locale | null {
  return BY_TAG.get(tag.replace('_', '-').toLowerCase()) ?? null;
}

/** Any value (a form field, a cookie, a profile row): a supported locale, else the default. */
export function localeOr(value: unknown, fallback: Locale = DEFAULT_LOCALE): Locale {
  if (isLocale(value)) return value;
  return (typeof value === 'string' && value.length <= 16 && localeFromTag(value)) || fallback;
}

/** Writing direction: Hebrew is the only right-to-left language of the spec's list. */
export function direction(locale: Locale): 'ltr' | 'rtl' {
  return locale === 'he_HE' ? 'rtl' : 'ltr';
}

const languageOf = (l: Locale) => l.slice(0, 2);
const sharedLanguage = (l: Locale) => LOCALES.filter((o) => languageOf(o) === languageOf(l)).length > 1;

/**
 * The locale's name in its own language, for the language switcher: "Русский", "Deutsch",
 * "Español (España)" (the region only where two locales share a language). From CLDR via
 * Intl.DisplayNames, so no list of names is kept by hand.
 */
export function nativeName(locale: Locale): string {
  const tag = bcp47(locale);
  const names = new Intl.DisplayNames([tag], { type: 'language', languageDisplay: 'standard' });
  const name = (sharedLanguage(locale) ? names.of(tag) : names.of(languageOf(locale))) ?? locale;
  return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
}
