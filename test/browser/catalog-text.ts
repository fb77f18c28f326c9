import { IntlMessageFormat } from 'intl-messageformat';
import type { Page } from 'playwright-core';
import en_US, { type MessageKey } from '../../src/i18n/catalogs/en_US.js';
import ru_RU from '../../src/i18n/catalogs/ru_RU.js';

/**
 * English text a Russian page must not show: every literal run of the English catalog (the text
 * between ICU arguments and tags, read with the library's own parser, inside plural and select
 * options too) of three or more letters that the Russian catalog does not share, matched as whole
 * words, case-sensitively.
 */
function ast(source: string) {
  try {
    return new IntlMessageFormat(source, 'en-US').getAst();
  } catch {
    // Not a rich message (a literal `<id>`): plain messages are formatted with tags as text.
    return new IntlMessageFormat(source, 'en-US', undefined, { ignoreTag: true }).getAst();
  }
}

export function englishFragments(): string[] {
  const fragments = new Set<string>();
  const walk = (elements: any[], out: string[]) => {
    for (const el of elements) {
      if (el.type === 0) out.push(el.value);
      else out.push('\u0000');
      if (el.options) for (const option of Object.values<any>(el.options)) walk(option.value, out);
      if (el.children) walk(el.children, out);
    }
  };
  for (const key of Object.keys(en_US) as MessageKey[]) {
    const english = en_US[key];
    if (english === ru_RU[key]) continue;
    // Field names inside error messages ("identifier", "title"): the API's parameter names in
    // English, which Russian pages may show as such (merchant_identifier); the messages around
    // them are checked.
    if (key.startsWith('err.label.')) continue;
    const parts: string[] = [];
    walk(ast(english), parts);
    for (const part of parts.join('').split('\u0000')) {
      const text = part.trim().replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '');
      // Names and acronyms read the same in every language (OpenAlerts, OAuth, API, OBS, UTC).
      if (/\p{L}{3,}/u.test(text) && !/^(OpenAlerts|OAuth|[A-Z]+)$/.test(text)) fragments.add(text);
    }
  }
  return [...fragments];
}

/** What a reader sees or hears: the text, and the attributes that carry words. */
export const visibleText = (page: Page) =>
  page.evaluate(() => {
    const parts = [document.title, document.body.innerText];
    document.querySelectorAll('[placeholder],[aria-label],[title],[data-confirm],[data-label],[alt]').forEach((el) => {
      for (const a of ['placeholder', 'aria-label', 'title', 'data-confirm', 'data-label', 'alt']) {
        const v = el.getAttribute(a);
        if (v) parts.push(v);
      }
    });
    return parts.join('\n');
  });

export const SHARED = (Object.keys(en_US) as MessageKey[]).filter((k) => en_US[k] === ru_RU[k] && !/[{<]/.test(en_US[k])).map((k) => en_US[k]);

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The English catalog text a page shows (none, on a Russian page): the visible text with what both
 * catalogs share and the template placeholders streamers type ({username}) taken out.
 */
export async function englishShown(page: Page): Promise<string[]> {
  const patterns = englishFragments().map((f) => ({ f, re: new RegExp(`(?<![\\p{L}])${escapeRegExp(f)}(?![\\p{L}])`, 'u') }));
  const text = SHARED.reduce((acc, shared) => acc.split(shared).join(' '), (await visibleText(page)).replace(/\{[a-z_]+\}/g, ' '));
  return patterns.filter(({ re }) => re.test(text)).map(({ f }) => f);
}
