import type { Locale } from '../locales.js';
import be_BY from './be_BY.js';
import de_DE from './de_DE.js';
import en_US, { type MessageKey } from './en_US.js';
import es_ES from './es_ES.js';
import es_US from './es_US.js';
import et_EE from './et_EE.js';
import fr_FR from './fr_FR.js';
import he_HE from './he_HE.js';
import it_IT from './it_IT.js';
import ka_GE from './ka_GE.js';
import kk_KZ from './kk_KZ.js';
import ko_KR from './ko_KR.js';
import lv_LV from './lv_LV.js';
import pl_PL from './pl_PL.js';
import pt_BR from './pt_BR.js';
import ru_RU from './ru_RU.js';
import sv_SE from './sv_SE.js';
import tr_TR from './tr_TR.js';
import uk_UA from './uk_UA.js';
import zh_CN from './zh_CN.js';

/** A locale's messages; a key it lacks is shown in English. */
export type Catalog = Partial<Record<MessageKey, string>>;

export const CATALOGS: Record<Locale, Catalog> = {
  be_BY, de_DE, en_US, es_ES, es_US, et_EE, fr_FR, he_HE, it_IT, ka_GE, kk_KZ, ko_KR, lv_LV, pl_PL, pt_BR, ru_RU, sv_SE, tr_TR, uk_UA, zh_CN,
};

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
