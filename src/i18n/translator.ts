import { IntlMessageFormat, type PrimitiveType } from 'intl-messageformat';
import { escapeHtml, Html } from '../web/html.js';
import { loadCatalog, type Catalog } from './catalogs/index.js';
import en_US, { type MessageKey } from './catalogs/en_US.js';
import { bcp47, DEFAULT_LOCALE, direction, type Locale } from './locales.js';

export type { MessageKey };

/** Argument values of a plain message. */
export type MessageValues = Record<string, PrimitiveType>;
/** Argument values of a rich message: text, our own markup, or a function for each `<tag>`. */
export type RichValues = Record<string, PrimitiveType | Html | ((chunks: Html[]) => Html)>;

/**
 * Compiled messages, one per (locale, key), made on first use. A message of a locale that does
 * not compile (a broken translation slipped past the catalog test) is remembered as missing, so
 * the English one is used instead — a translation problem never breaks a page.
 */
const compiled = new Map<string, IntlMessageFormat | null>();

/** `rich`: `<tags>` are markup to map; otherwise they are plain text like any other. */
function formatter(locale: Locale, catalog: Catalog, key: MessageKey, rich: boolean): IntlMessageFormat | null {
  const id = `${locale}\u0000${key}\u0000${rich ? 'rich' : 'plain'}`;
  let mf = compiled.get(id);
  if (mf === undefined) {
    const source = catalog[key];
    try {
      mf = source === undefined ? null : new IntlMessageFormat(source, bcp47(locale), undefined, { ignoreTag: !rich });
    } catch {
      mf = null;
    }
    compiled.set(id, mf);
  }
  return mf;
}

/** The locale's message if it has one that formats, else the English one (per string). */
function formatWith<T>(locale: Locale, catalog: Catalog, key: MessageKey, rich: boolean, run: (mf: IntlMessageFormat) => T): T {
  const own = locale === DEFAULT_LOCALE ? null : formatter(locale, catalog, key, rich);
  if (own) {
    try {
      return run(own);
    } catch {
      // A translation that needs arguments the page does not pass: English has the right ones.
    }
  }
  const english = formatter(DEFAULT_LOCALE, en_US, key, rich);
  if (!english) throw new Error(`i18n: the English catalog has no usable message ${key}`);
  return run(english);
}

const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

function cachedNumberFormat(tag: string, currency?: string): Intl.NumberFormat {
  const id = `${tag}:${currency ?? ''}`;
  let f = numberFormats.get(id);
  if (!f) {
    f = currency
      ? new Intl.NumberFormat(tag, { style: 'currency', currency, minimumFractionDigits: 2, maximumFractionDigits: 2 })
      : new Intl.NumberFormat(tag, { maximumFractionDigits: 2 });
    numberFormats.set(id, f);
  }
  return f;
}

/**
 * Everything a page needs to speak one locale: messages from the catalogs (ICU MessageFormat
 * through intl-messageformat) with per-string English fallback, and money, numbers and dates
 * through `Intl` in the same locale.
 */
export class Translator {
  readonly tag: string;
  readonly dir: 'ltr' | 'rtl';

  /** Made by `translator()`, once the locale's catalog is loaded. */
  constructor(
    readonly locale: Locale,
    private readonly catalog: Catalog,
  ) {
    this.tag = bcp47(locale);
    this.dir = direction(locale);
  }

  /** A plain-text message; the page's `html` template escapes it like any other text. */
  t(key: MessageKey, values?: MessageValues): string {
    return formatWith(this.locale, this.catalog, key, false, (mf) => String(mf.format<string>(values)));
  }

  /**
   * A message with markup: every text part (the translation's and the arguments') is escaped;
   * only `Html` values and the functions given for its `<tags>` produce markup.
   */
  rich(key: MessageKey, values: RichValues): Html {
    return formatWith(this.locale, this.catalog, key, true, (mf) => {
      const wrapped: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(values)) {
        wrapped[name] = typeof value === 'function' ? (chunks: unknown[]) => value(chunks.map(toHtml)) : value;
      }
      const out = mf.format<Html>(wrapped as Record<string, PrimitiveType | Html>);
      return new Html((Array.isArray(out) ? out : [out]).map((part) => toHtml(part).value).join(''));
    });
  }

  /** True when the key exists (in English at least): for keys built from data, e.g. `payment.<id>.label`. */
  has(key: string): key is MessageKey {
    return key in en_US;
  }

  /** True when this locale has its own text for the key (not the English fallback). */
  translates(key: MessageKey): boolean {
    return this.locale === DEFAULT_LOCALE || this.catalog[key] !== undefined;
  }

  /** Minor units with the currency's symbol and the locale's separators: `1 234,50 ₽`, `$1,234.50`. */
  money(minor: number, currency: string): string {
    return this.moneyMajor(minor / 100, currency);
  }

  moneyMajor(amount: number, currency: string): string {
    try {
      return cachedNumberFormat(this.tag, currency).format(amount);
    } catch {
      // Not an ISO 4217 code (never from our own data): the number and the code as given.
      return `${this.number(amount)} ${currency}`;
    }
  }

  /** A plain decimal with two places and no grouping, as our amount fields accept it: `10,50`, `10.50`. */
  decimal(n: number): string {
    let f = numberFormats.get(`${this.tag}:decimal`);
    if (!f) numberFormats.set(`${this.tag}:decimal`, (f = new Intl.NumberFormat(this.tag, { minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false })));
    return f.format(n);
  }

  /** A percentage given as 0–100: `45%`, `45 %`. */
  percent(value: number): string {
    let f = numberFormats.get(`${this.tag}:percent`);
    if (!f) numberFormats.set(`${this.tag}:percent`, (f = new Intl.NumberFormat(this.tag, { style: 'percent', maximumFractionDigits: 2 })));
    return f.format(value / 100);
  }

  /** A number with the locale's separators; `digits`: the most decimals kept (rates need more than 2). */
  number(n: number, digits = 2): string {
    if (digits === 2) return cachedNumberFormat(this.tag).format(n);
    let f = numberFormats.get(`${this.tag}:${digits}`);
    if (!f) numberFormats.set(`${this.tag}:${digits}`, (f = new Intl.NumberFormat(this.tag, { maximumFractionDigits: digits })));
    return f.format(n);
  }

  /** A date and time in UTC, in the locale's style (pages mark it for dashboard.js to show local time). */
  dateTime(epochMs: number): string {
    let f = dateFormats.get(this.tag);
    if (!f) dateFormats.set(this.tag, (f = new Intl.DateTimeFormat(this.tag, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })));
    return f.format(epochMs);
  }

  /** A calendar day in UTC, short, in the locale's style: `Nov 26`, `26 нояб.`. */
  day(epochMs: number): string {
    let f = dateFormats.get(`${this.tag}:day`);
    if (!f) dateFormats.set(`${this.tag}:day`, (f = new Intl.DateTimeFormat(this.tag, { day: 'numeric', month: 'short', timeZone: 'UTC' })));
    return f.format(epochMs);
  }

  /** Messages for a page's scripts, every key of the given namespaces, each in this locale or English. */
  messagesFor(...namespaces: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    const own = this.catalog;
    for (const [key, english] of Object.entries(en_US)) {
      if (!namespaces.some((ns) => key.startsWith(`${ns}.`))) continue;
      const mine = own[key as MessageKey];
      out[key] = mine !== undefined && formatter(this.locale, own, key as MessageKey, false) ? mine : english;
    }
    return out;
  }
}

function toHtml(part: unknown): Html {
  if (part instanceof Html) return part;
  if (Array.isArray(part)) return new Html(part.map((p) => toHtml(p).value).join(''));
  return new Html(escapeHtml(part === null || part === undefined ? '' : String(part)));
}

const ENGLISH = new Translator(DEFAULT_LOCALE, en_US);
const translators = new Map<Locale, Promise<Translator>>([[DEFAULT_LOCALE, Promise.resolve(ENGLISH)]]);

/**
 * The (shared, immutable) translator of a locale; the first call for a locale loads its catalog
 * (catalogs/index.ts), which is why it is asynchronous: a page awaits its language before it renders.
 */
export function translator(locale: Locale): Promise<Translator> {
  let t = translators.get(locale);
  if (!t) {
    t = loadCatalog(locale).then((catalog) => new Translator(locale, catalog));
    translators.set(locale, t);
    t.catch(() => translators.delete(locale));
  }
  return t;
}

/** The English translator (its catalog is always loaded): the API's, the CLI's and the logs' language. */
export const english = (): Translator => ENGLISH;
