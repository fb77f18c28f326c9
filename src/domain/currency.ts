/** Spec §2 "Supported currencies" (compatibility.md §3 says which operation takes which list). */
export const INPUT_CURRENCIES = ['EUR', 'USD', 'RUB', 'BRL', 'TRY'] as const;
export const OUTPUT_CURRENCIES = ['EUR', 'USD', 'RUB', 'BYN', 'KZT', 'UAH', 'BRL', 'TRY'] as const;

export type InputCurrency = (typeof INPUT_CURRENCIES)[number];
export type OutputCurrency = (typeof OUTPUT_CURRENCIES)[number];
export type Currency = OutputCurrency;

/** Every supported currency has two decimal places in ISO 4217. */
export const MINOR_UNIT_DIGITS = 2;

export function isInputCurrency(value: unknown): value is InputCurrency {
  return typeof value === 'string' && (INPUT_CURRENCIES as readonly string[]).includes(value);
}

export function isOutputCurrency(value: unknown): value is OutputCurrency {
  return typeof value === 'string' && (OUTPUT_CURRENCIES as readonly string[]).includes(value);
}

/** Spec §2 "Supported locales". */
export const LOCALES = [
  'be_BY', 'de_DE', 'en_US', 'es_ES', 'es_US', 'et_EE', 'fr_FR', 'he_HE', 'it_IT', 'ka_GE',
  'kk_KZ', 'ko_KR', 'lv_LV', 'pl_PL', 'pt_BR', 'ru_RU', 'sv_SE', 'tr_TR', 'uk_UA', 'zh_CN',
] as const;
export type Locale = (typeof LOCALES)[number];

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}
