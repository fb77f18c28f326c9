import type { Locale } from '../locales.js';
import en_US, { type MessageKey } from './en_US.js';

/** A locale's messages; a key it lacks is shown in English. */
export type Catalog = Partial<Record<MessageKey, string>>;

/**
 * The other locales' catalogs, each imported the first time something needs its language
 * (loadCatalog: the pages' language hook, a widget in its streamer's language): English is what a
 * start and the API need, and a server sees a few of the twenty languages, not all of them.
 */
const IMPORTS: Record<Exclude<Locale, 'en_US'>, () => Promise<{ default: Catalog }>> = {
  be_BY: () => import('./be_BY.js'),
  de_DE: () => import('./de_DE.js'),
  es_ES: () => import('./es_ES.js'),
  es_US: () => import('./es_US.js'),
  et_EE: () => import('./et_EE.js'),
  fr_FR: () => import('./fr_FR.js'),
  he_HE: () => import('./he_HE.js'),
  it_IT: () => import('./it_IT.js'),
  ka_GE: () => import('./ka_GE.js'),
  kk_KZ: () => import('./kk_KZ.js'),
  ko_KR: () => import('./ko_KR.js'),
  lv_LV: () => import('./lv_LV.js'),
  pl_PL: () => import('./pl_PL.js'),
  pt_BR: () => import('./pt_BR.js'),
  ru_RU: () => import('./ru_RU.js'),
  sv_SE: () => import('./sv_SE.js'),
  tr_TR: () => import('./tr_TR.js'),
  uk_UA: () => import('./uk_UA.js'),
  zh_CN: () => import('./zh_CN.js'),
};

const loaded = new Map<Locale, Promise<Catalog>>([['en_US', Promise.resolve(en_US)]]);

/** The locale's catalog, imported once (a failed import is tried again by the next call). */
export function loadCatalog(locale: Locale): Promise<Catalog> {
  let catalog = loaded.get(locale);
  if (!catalog) {
    catalog = IMPORTS[locale as Exclude<Locale, 'en_US'>]().then(
      (m) => m.default,
      (err) => {
        loaded.delete(locale);
        throw err;
      },
    );
    loaded.set(locale, catalog);
  }
  return catalog;
}

/**
 * What each locale promises to translate (the catalog test holds every locale to it): all of
 * English, or the namespaces donors and the stream audience see — the donor page, the widgets,
 * the page shell around them and their error pages. Other strings fall back to English.
 */
export const AUDIENCE_NAMESPACES = ['layout', 'lang', 'donor', 'payment', 'widget'] as const;
export const FULL_LOCALES: readonly Locale[] = ['en_US', 'ru_RU'];

export function coverage(locale: Locale): 'all' | readonly string[] {
  return FULL_LOCALES.includes(locale) ? 'all' : AUDIENCE_NAMESPACES;
}
