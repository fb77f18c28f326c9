import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { coverage, loadCatalog, type Catalog } from '../../src/i18n/catalogs/index.js';
import en_US, { type MessageKey } from '../../src/i18n/catalogs/en_US.js';
import { bcp47, LOCALES, type Locale } from '../../src/i18n/locales.js';
import { translator } from '../../src/i18n/translator.js';
import { html } from '../../src/web/html.js';

const EN_KEYS = Object.keys(en_US) as MessageKey[];
/** Every locale's catalog (the server imports each on first use). */
const CATALOGS = Object.fromEntries(await Promise.all(LOCALES.map(async (l) => [l, await loadCatalog(l)] as const))) as Record<Locale, Catalog>;

/** The keys a locale promises (all of English, or its audience namespaces). */
function promised(locale: Locale): MessageKey[] {
  const scope = coverage(locale);
  return scope === 'all' ? EN_KEYS : EN_KEYS.filter((k) => scope.some((ns) => k.startsWith(`${ns}.`)));
}

interface Shape {
  args: Set<string>;
  tags: Set<string>;
  plurals: Array<Set<string>>;
}

/** Arguments, tags and plural categories of a message, from the library's own parse. */
function shape(source: string, locale: Locale): Shape {
  const out: Shape = { args: new Set(), tags: new Set(), plurals: [] };
  const walk = (elements: any[]) => {
    for (const el of elements) {
      if (el.type === 8) {
        out.tags.add(el.value);
        walk(el.children);
        continue;
      }
      if (typeof el.value === 'string' && [1, 2, 3, 4, 5, 6].includes(el.type)) out.args.add(el.value);
      if (el.type === 6) out.plurals.push(new Set(Object.keys(el.options)));
      if (el.options) for (const option of Object.values<any>(el.options)) walk(option.value);
    }
  };
  let mf: IntlMessageFormat;
  try {
    mf = new IntlMessageFormat(source, bcp47(locale));
  } catch {
    // Not a rich message (e.g. a literal `<id>`): plain messages are formatted with tags as text.
    mf = new IntlMessageFormat(source, bcp47(locale), undefined, { ignoreTag: true });
  }
  walk(mf.getAst());
  return out;
}

/** Plural categories whole numbers reach in this language (CLDR, through Intl.PluralRules). */
function integerCategories(locale: Locale): Set<string> {
  const rules = new Intl.PluralRules(bcp47(locale));
  const seen = new Set<string>();
  for (let n = 0; n <= 1000; n++) seen.add(rules.select(n));
  return seen;
}

describe('message catalogs', () => {
  for (const locale of LOCALES) {
    test(`${locale}: every promised key of en_US is there, and no key English lacks`, () => {
      const catalog = CATALOGS[locale];
      const missing = promised(locale).filter((k) => typeof catalog[k] !== 'string' || catalog[k] === '');
      assert.deepEqual(missing, [], `${locale} lacks ${missing.length} key(s) that en_US has`);
      const unknown = Object.keys(catalog).filter((k) => !(k in en_US));
      assert.deepEqual(unknown, [], `${locale} has keys that en_US does not`);
    });

    test(`${locale}: every message parses, with the same arguments and tags as English and this language's plural forms`, () => {
      const categories = integerCategories(locale);
      const allowed = new Set(new Intl.PluralRules(bcp47(locale)).resolvedOptions().pluralCategories);
      for (const [key, source] of Object.entries(CATALOGS[locale]) as Array<[MessageKey, string]>) {
        const mine = shape(source, locale);
        const english = shape(en_US[key], 'en_US');
        assert.deepEqual([...mine.args].sort(), [...english.args].sort(), `${locale} ${key}: arguments differ from English`);
        assert.deepEqual([...mine.tags].sort(), [...english.tags].sort(), `${locale} ${key}: tags differ from English`);
        for (const options of mine.plurals) {
          for (const c of categories) assert.ok(options.has(c), `${locale} ${key}: plural lacks the "${c}" form`);
          for (const o of options) assert.ok(allowed.has(o as Intl.LDMLPluralRule) || /^=\d+$/.test(o), `${locale} ${key}: "${o}" is not a plural form of this language`);
        }
      }
    });

    if (locale !== 'en_US') {
      test(`${locale}: translations are not English copies`, () => {
        // A word may be the same in two languages ("Name", "admin"); a copied catalog is not.
        const copies = (Object.entries(CATALOGS[locale]) as Array<[string, string]>).filter(([k, v]) => v === en_US[k as MessageKey] && /[a-z]{3,}/i.test(v.replace(/\{[^}]*\}|OpenAlerts/g, '')));
        assert.ok(copies.length <= 3, `${locale}: ${copies.length} messages are the English text: ${copies.map(([k]) => k).join(', ')}`);
      });
    }
  }
});

describe('translator', () => {
  test('Russian plurals, money and dates through Intl', async () => {
    const ru = await translator('ru_RU');
    assert.deepEqual([1, 2, 5, 21, 112].map((count) => ru.t('widget.poll_count', { count })), ['1 донат', '2 доната', '5 донатов', '21 донат', '112 донатов']);
    assert.equal(ru.money(123450, 'RUB'), '1\u00a0234,50\u00a0₽');
    assert.equal((await translator('en_US')).money(123450, 'USD'), '$1,234.50');
    assert.match(ru.dateTime(Date.UTC(2026, 0, 5, 10, 30)), /5 янв\. 2026 г\., 10:30/);
  });

  test('a key a locale lacks is shown in English, per string', async () => {
    const de = await translator('de_DE');
    assert.equal(de.t('donor.submit'), 'Spenden');
    assert.equal(de.t('nav.overview'), en_US['nav.overview']);
  });

  test('no message renders as its key, and text from a catalog is always escaped', async () => {
    const strong = (chunks: unknown) => html`<strong>${chunks as string}</strong>`;
    for (const locale of LOCALES) {
      const t = await translator(locale);
      for (const key of EN_KEYS) {
        const english = shape(en_US[key], 'en_US');
        const values: Record<string, any> = {};
        for (const a of english.args) values[a] = a === 'count' || a === 'max' || a === 'status' || a === 'seconds' || a === 'min' ? 3 : `<${a}&>`;
        if (english.tags.size === 0) {
          const text = t.t(key, values);
          assert.notEqual(text, key, `${locale} ${key} renders as its key`);
          assert.ok(!html`${text}`.value.includes('<'), `${locale} ${key}: markup got through`);
        } else {
          for (const tag of english.tags) values[tag] = strong;
          const out = t.rich(key, values).value;
          assert.ok(!out.includes(key));
          assert.equal(out.replace(/<\/?strong>/g, '').includes('<'), false, `${locale} ${key}: only mapped tags become markup: ${out}`);
        }
      }
    }
  });
});
